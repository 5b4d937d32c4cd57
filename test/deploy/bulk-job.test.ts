// run-tests: parallel
// deploy/kubernetes/bulk (the Indexed Job of docs/deploy.md, "Bulk work"), built by `kubectl
// kustomize` as a user applies it (the YAML files read directly where kubectl is not installed),
// validates against the Kubernetes API's schemas (kubernetes-models), and what matters holds:
// completions = parallelism = MATTE_SHARDS, indexed with a retry limit per index and exit 1 (inputs
// failed) not retried, the server Deployment's image and security context, documented settings only;
// and the command it runs, with the environment it gives (JOB_COMPLETION_INDEX as Kubernetes sets
// it), runs its shard against a real S3-protocol server on loopback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { lines, runCli } from '../helpers/cli.js';
import { assertValidManifest, documentedSettings, KUBECTL, kustomize, type Manifest } from '../helpers/deploy.js';
import { makePng } from '../helpers/images.js';
import { startTestS3 } from '../helpers/s3.js';

const build = kustomize;

const job = (manifests: Manifest[]) => manifests.find((m) => m.kind === 'Job')!;
if (!KUBECTL) console.log('bulk-job: kubectl is not installed: the YAML files are validated as written (no kustomize build)');

test('every manifest validates against the Kubernetes API\'s schema', () => {
  const manifests = build('bulk');
  assert.ok(manifests.some((m) => m.kind === 'Job'));
  for (const manifest of manifests) assertValidManifest(manifest);
});

test('an Indexed Job: completions = parallelism = MATTE_SHARDS, a retry limit per index, exit 1 not retried', () => {
  const spec = job(build('bulk')).spec;
  assert.is(spec.completionMode, 'Indexed');
  assert.is(spec.parallelism, spec.completions);
  const container = spec.template.spec.containers[0];
  const shards = container.env.find((e: { name: string }) => e.name === 'MATTE_SHARDS');
  assert.is(shards?.value, String(spec.completions), 'MATTE_SHARDS is the completions');
  assert.ok(spec.backoffLimitPerIndex >= 1);
  assert.is(spec.template.spec.restartPolicy, 'Never');
  const failIndex = spec.podFailurePolicy.rules.find((r: { action: string }) => r.action === 'FailIndex');
  assert.equal(failIndex.onExitCodes, { containerName: container.name, operator: 'In', values: [1] });
  assert.equal(container.args.slice(0, 2), ['matte', 'remove-background']);
  assert.ok(container.args.some((a: string) => a.startsWith('s3://')), 'bucket to bucket');
});

test('the server Deployment\'s image and security context; only documented settings', () => {
  const manifests = build('bulk');
  const pod = job(manifests).spec.template.spec;
  const container = pod.containers[0];
  const server = build('base').find((m) => m.kind === 'Deployment')!.spec.template.spec;
  assert.is(container.image, server.containers[0].image);
  assert.equal(container.securityContext, server.containers[0].securityContext);
  for (const key of ['runAsNonRoot', 'runAsUser', 'runAsGroup', 'seccompProfile']) assert.equal(pod.securityContext[key], server.securityContext[key], key);
  assert.is(container.securityContext.readOnlyRootFilesystem, true);
  assert.equal(container.securityContext.capabilities.drop, ['ALL']);
  assert.ok(container.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/tmp'), 'a writable /tmp');
  const documented = documentedSettings();
  const names = [
    ...container.env.map((e: { name: string }) => e.name),
    ...manifests.filter((m) => m.kind === 'ConfigMap' || m.kind === 'Secret').flatMap((m) => Object.keys({ ...m.data, ...m.stringData })),
  ];
  for (const name of names) assert.ok(documented.has(name), `${name} is in docs/configuration.md`);
});

test('the command the Job runs, with its environment and JOB_COMPLETION_INDEX, does its shard against a real bucket', async () => {
  const s3 = await startTestS3('shop');
  try {
    for (let i = 0; i < 6; i++) await s3.client.send(new PutObjectCommand({ Bucket: 'shop', Key: `raw/p${i}.png`, Body: makePng(24, 16, () => [200, 30, 30]) }));
    const container = job(build('bulk')).spec.template.spec.containers[0];
    const env: Record<string, string> = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    const [command, ...args] = container.args as string[];
    assert.is(command, 'matte');
    // The Secret's placeholders and the ConfigMap's region give way to the test server's.
    const run = await runCli([...args, '--json'], {
      env: { ...env, JOB_COMPLETION_INDEX: '7', MATTE_S3_ENDPOINT: s3.endpoint, MATTE_S3_FORCE_PATH_STYLE: '1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
      timeoutMs: 300_000,
    });
    assert.is(run.code, 0, run.stderr);
    const summary = JSON.parse(lines(run.stdout).pop()!);
    assert.is(summary.shard, `7/${env.MATTE_SHARDS}`);
    assert.is(summary.report, 's3://shop/cutouts/.matte/failures-7-of-16.jsonl');
    assert.ok(s3.puts.includes('cutouts/.matte/failures-7-of-16.jsonl'));
  } finally {
    await s3.close();
  }
});

test.run();
