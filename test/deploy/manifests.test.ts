// run-tests: parallel
// deploy/kubernetes/: each overlay, built by `kubectl kustomize` as a user applies it, validates
// against the Kubernetes API's schemas (kubernetes-models, a pinned devDependency), and what matters
// holds: the probes reach the real server's /healthz and /readyz on the port it listens on, the
// grace period outlasts the shutdown, the pods run as the image's user with nothing to escalate,
// results are never on a mode-0777 directory, and every MATTE_* set is a documented setting that
// the server's own configuration accepts. Skips, with one line, where kubectl is not installed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../server/config.js';
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { assertValidManifest, dockerfileRuntime, documentedSettings, KUBECTL, kustomize, ROOT, type Manifest } from '../helpers/deploy.js';
import { get, startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const OVERLAYS = ['bucket', 'shared-volume'];
// Placeholders for the Secret's values, so the server's configuration can be loaded from the rest.
const REAL_KEYS = { MATTE_API_KEYS: 'a-real-api-key-0123456789', MATTE_URL_SIGNING_KEYS: 'a-real-signing-key-0123456789abcdef0123456789', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret' };

const build = kustomize;

const one = (manifests: Manifest[], kind: string) => {
  const found = manifests.filter((m) => m.kind === kind);
  assert.is(found.length, 1, `one ${kind}`);
  return found[0]!;
};

/** The environment the container starts with: envFrom's ConfigMap and Secret, then env. */
function containerEnvironment(manifests: Manifest[]): Record<string, string> {
  const container = one(manifests, 'Deployment').spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    const source = from.configMapRef ? manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === from.configMapRef.name) : manifests.find((m) => m.kind === 'Secret' && m.metadata.name === from.secretRef.name);
    assert.ok(source, `envFrom names ${JSON.stringify(from)}, which the overlay holds`);
    Object.assign(env, source!.data, source!.stringData);
  }
  for (const { name, value } of container.env ?? []) env[name] = value;
  return env;
}

if (!KUBECTL) {
  console.log('skip manifests: kubectl is not installed (kubectl kustomize builds deploy/kubernetes)');
} else {
  const runtime = dockerfileRuntime();

  for (const overlay of OVERLAYS) {
    test(`${overlay}: every manifest validates against the Kubernetes API's schema`, () => {
      const manifests = build(overlay);
      assert.ok(manifests.length >= 7, `${manifests.length} manifests`);
      for (const manifest of manifests) {
        assertValidManifest(manifest);
        assert.is(manifest.metadata.labels?.['app.kubernetes.io/name'], 'matte', `${manifest.kind} is labelled`);
      }
    });

    test(`${overlay}: probes and ports are the server's, and the image's`, () => {
      const manifests = build(overlay);
      const container = one(manifests, 'Deployment').spec.template.spec.containers[0];
      const env = containerEnvironment(manifests);
      const port = (name: string) => container.ports.find((p: { name: string }) => p.name === name)?.containerPort;
      assert.is(String(port('http')), env.PORT, 'the http port is PORT');
      assert.is(String(port('http')), runtime.env.PORT, "the http port is the image's PORT");
      assert.is(`0.0.0.0:${port('metrics')}`, env.MATTE_METRICS_ADDRESS, 'the metrics port is MATTE_METRICS_ADDRESS');
      assert.equal(runtime.expose, [String(port('http')), String(port('metrics'))], 'the image exposes both');
      assert.is(container.readinessProbe.httpGet.path, '/readyz');
      assert.is(container.livenessProbe.httpGet.path, '/healthz');
      assert.is(container.startupProbe.httpGet.path, '/healthz');
      for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) assert.is(container[probe].httpGet.port, 'http', probe);
      const annotations = one(manifests, 'Deployment').spec.template.metadata.annotations;
      assert.is(annotations['prometheus.io/port'], String(port('metrics')));
      assert.is(annotations['prometheus.io/path'], '/metrics');
      const service = one(manifests, 'Service');
      assert.is(service.spec.ports[0].targetPort, 'http');
      const policy = one(manifests, 'NetworkPolicy');
      assert.equal(policy.spec.ingress.flatMap((rule: any) => rule.ports.map((p: any) => p.port)).sort(), ['http', 'metrics']);
      assert.equal(policy.spec.egress.flatMap((rule: any) => rule.ports.map((p: any) => `${p.port}/${p.protocol}`)).sort(), ['443/TCP', '53/TCP', '53/UDP', '80/TCP']);
    });

    test(`${overlay}: egress to 80/443 reaches public addresses only: private, shared, link-local (metadata) and unique-local ranges are left out`, () => {
      const policy = one(build(overlay), 'NetworkPolicy');
      const web = policy.spec.egress.find((rule: any) => rule.ports.some((p: any) => p.port === 443));
      const blocks: Array<{ cidr: string; except?: string[] }> = web.to.map((peer: any) => peer.ipBlock);
      const within = (address: string, cidr: string) => {
        const parsed = ipaddr.parse(address);
        const [range, bits] = ipaddr.parseCIDR(cidr);
        return parsed.kind() === range.kind() && parsed.match(range, bits);
      };
      const allowed = (address: string) => blocks.some((block) => within(address, block.cidr) && !(block.except ?? []).some((cidr) => within(address, cidr)));
      for (const address of ['169.254.169.254', '10.96.0.1', '10.42.3.7', '172.20.0.5', '192.168.1.10', '100.64.0.10', '127.0.0.1', '0.0.0.0', 'fd00:ec2::254', 'fd12:3456::1', 'fe80::1', '::1', '::', '::ffff:169.254.169.254', '::ffff:10.0.0.1']) {
        assert.not.ok(allowed(address), `${address} is left out`);
      }
      for (const address of ['93.184.216.34', '52.219.170.10', '2606:4700:4700::1111', '2a05:d018::1']) assert.ok(allowed(address), `${address} is reached`);
    });

    test(`${overlay}: shutdown, security context, spread, budget and autoscaling`, () => {
      const manifests = build(overlay);
      const deployment = one(manifests, 'Deployment');
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0];
      const env = containerEnvironment(manifests);
      const preStopSeconds = Number(container.lifecycle.preStop.exec.command[1]);
      // matte's own last resort kills the process 3 s after the shutdown timeout (server/main.ts).
      assert.ok(pod.terminationGracePeriodSeconds > Number(env.MATTE_SHUTDOWN_TIMEOUT_SECONDS) + preStopSeconds + 3, `grace ${pod.terminationGracePeriodSeconds} s`);
      assert.is(pod.securityContext.runAsNonRoot, true);
      assert.is(`${pod.securityContext.runAsUser}:${pod.securityContext.runAsGroup}`, runtime.user, "the image's user");
      assert.is(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
      assert.is(pod.automountServiceAccountToken, false);
      const context = container.securityContext;
      assert.is(context.readOnlyRootFilesystem, true);
      assert.is(context.allowPrivilegeEscalation, false);
      assert.is(context.runAsNonRoot, true);
      assert.equal(context.capabilities.drop, ['ALL']);
      assert.not.ok(context.capabilities.add);
      assert.is(context.seccompProfile.type, 'RuntimeDefault');
      assert.ok(container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory);
      // The limit's cores are the jobs: Node sees the node's cores, not the container's limit.
      assert.is(String(container.resources.limits.cpu), env.MATTE_CONCURRENCY);
      assert.ok(pod.topologySpreadConstraints.some((c: any) => c.topologyKey === 'kubernetes.io/hostname'));
      const podLabels = deployment.spec.template.metadata.labels;
      const selects = (selector: Record<string, string>) => Object.entries(selector).every(([k, v]) => podLabels[k] === v);
      assert.ok(selects(one(manifests, 'PodDisruptionBudget').spec.selector.matchLabels), 'the budget selects the pods');
      assert.ok(selects(one(manifests, 'Service').spec.selector), 'the Service selects the pods');
      assert.ok(selects(one(manifests, 'NetworkPolicy').spec.podSelector.matchLabels), 'the policy selects the pods');
      assert.ok(one(manifests, 'PodDisruptionBudget').spec.minAvailable < deployment.spec.replicas, 'a node can be drained');
      const hpa = one(manifests, 'HorizontalPodAutoscaler');
      assert.equal(hpa.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
      assert.ok(hpa.spec.minReplicas >= 2);
    });

    test(`${overlay}: results are one level below the mounted volume, never on a 0777 directory`, () => {
      const manifests = build(overlay);
      const pod = one(manifests, 'Deployment').spec.template.spec;
      const env = containerEnvironment(manifests);
      const mounts = pod.containers[0].volumeMounts as Array<{ name: string; mountPath: string }>;
      const state = mounts.find((m) => env.MATTE_RESULTS_DIR!.startsWith(`${m.mountPath}/`));
      assert.ok(state, `a volume holds ${env.MATTE_RESULTS_DIR}`);
      assert.ok(!mounts.some((m) => m.mountPath === env.MATTE_RESULTS_DIR), 'the results directory itself is not a mount point');
      assert.ok(mounts.some((m) => m.mountPath === '/tmp'), '/tmp is writable under a read-only root');
      const volume = pod.volumes.find((v: { name: string }) => v.name === state!.name);
      if (overlay === 'shared-volume') {
        const claim = one(manifests, 'PersistentVolumeClaim');
        assert.is(volume.persistentVolumeClaim?.claimName, claim.metadata.name);
        assert.not.ok(volume.emptyDir, 'the patch replaced the emptyDir');
        assert.equal(claim.spec.accessModes, ['ReadWriteMany']);
        assert.is(env.MATTE_RESULTS_STORE, 'disk');
      } else {
        assert.is(env.MATTE_RESULTS_STORE, 's3');
        assert.ok(env.MATTE_S3_BUCKET);
      }
    });

    test(`${overlay}: every MATTE_* is documented, and the server accepts them once the keys are real`, () => {
      const manifests = build(overlay);
      const env = containerEnvironment(manifests);
      const documented = documentedSettings();
      const settings = Object.keys(env).filter((name) => name.startsWith('MATTE_'));
      assert.ok(settings.length >= 8);
      for (const name of settings) assert.ok(documented.has(name), `${name} is in docs/configuration.md`);
      // The Secret's placeholders are refused, so no one runs with keys printed in the repository.
      assert.throws(() => loadConfig(env, 2), (err: unknown) => err instanceof ConfigError);
      const config = loadConfig({ ...env, ...REAL_KEYS }, 2);
      assert.is(config.concurrency, Number(env.MATTE_CONCURRENCY));
      assert.is(config.shutdownTimeoutMs, Number(env.MATTE_SHUTDOWN_TIMEOUT_SECONDS) * 1000);
      assert.is(config.resultsStore, env.MATTE_RESULTS_STORE);
    });
  }

  test('the probe paths answer on the real server: /healthz 200, /readyz 200 once ready', async () => {
    const server = await startTestServer();
    try {
      assert.is((await get(server.url, '/healthz')).status, 200);
      const ready = await waitFor('GET /readyz 200', async () => {
        const reply = await get(server.url, '/readyz');
        return reply.status === 200 && reply;
      }, { timeoutMs: 60_000 });
      assert.is(ready.json().status, 'ready');
    } finally {
      await server.close();
    }
  });

  test('an overlay sits beside base/, and the base alone names both overlays', () => {
    for (const overlay of OVERLAYS) {
      const text = readFileSync(`${ROOT}deploy/kubernetes/${overlay}/kustomization.yaml`, 'utf8');
      assert.match(text, /^\s+- \.\.\/base$/m, `${overlay} points back at ../base`);
    }
    const base = readFileSync(`${ROOT}deploy/kubernetes/base/kustomization.yaml`, 'utf8');
    for (const overlay of OVERLAYS) assert.match(base, new RegExp(`deploy/kubernetes/${overlay}`));
  });
}

test.run();
