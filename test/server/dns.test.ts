// run-tests: parallel
// The URL fetcher's DNS lookup runs under the fetch deadline and off libuv's thread pool, and URL
// fetches are bounded: with a resolver that never answers (a UDP socket on loopback that swallows
// every query), fetches fail with 422 in time, the excess is refused with 503, and jobs and
// /readyz keep answering meanwhile.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import dgram from 'node:dgram';
import { ConfigError, loadConfig } from '../../server/config.js';
import { gradient } from '../helpers/images.js';
import { get, post, startTestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const blackHole = dgram.createSocket('udp4');
let queries = 0;
blackHole.on('message', () => queries++);
await new Promise<void>((r) => blackHole.bind(0, '127.0.0.1', () => r()));
const dnsPort = blackHole.address().port;

// The pool is 4 threads (this process's UV_THREADPOOL_SIZE default); 8 hanging lookups on it would
// block every job. MATTE_MAX_URL_FETCHES=6 admits six fetches at once.
const server = await startTestServer({
  MATTE_DNS_SERVERS: `127.0.0.1:${dnsPort}`,
  MATTE_URL_FETCH_TIMEOUT_SECONDS: '2',
  MATTE_MAX_URL_FETCHES: '6',
  MATTE_CONCURRENCY: '2',
  MATTE_QUEUE_LIMIT: '20',
});

test('MATTE_DNS_SERVERS and MATTE_MAX_URL_FETCHES are validated at start-up', () => {
  for (const [name, value] of [
    ['MATTE_DNS_SERVERS', 'not-an-address'],
    ['MATTE_DNS_SERVERS', '127.0.0.1:99999'],
    ['MATTE_MAX_URL_FETCHES', '0'],
  ]) {
    try {
      loadConfig({ [name!]: value });
      assert.unreachable(`${name}=${value} accepted`);
    } catch (err) {
      assert.instance(err, ConfigError);
      assert.match((err as Error).message, name!);
    }
  }
  assert.equal(loadConfig({ MATTE_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,10.0.0.1' }).dnsServers, ['127.0.0.1:5353', '[::1]:53', '10.0.0.1']);
});

test('a resolver that never answers: 422 within the deadline; beyond MATTE_MAX_URL_FETCHES, 503; jobs and /readyz still answer', async () => {
  const started = Date.now();
  let settled = 0;
  const fetches = Array.from({ length: 8 }, (_, i) =>
    post(server.url, '/images/edit', { input: `http://never-answers-${i}.example/a.png`, operations: '[{"flip":"h"}]' }).finally(() => settled++),
  );
  // While the lookups hang: an upload job and /readyz answer.
  await waitFor(() => `the lookups to reach the resolver (${queries} queries)`, () => queries >= 6);
  const job = await post(server.url, '/images/edit', { input: gradient(32, 32), operations: '[{"blur":1}]', output: 'raw' });
  assert.is(job.status, 200, job.body.toString());
  assert.is((await get(server.url, '/readyz')).status, 200);
  assert.ok(settled <= 2, 'the job and /readyz answered while the six admitted lookups still hung (at most the two 503s were answered)');

  const replies = await Promise.all(fetches);
  const statuses = replies.map((r) => r.status).sort();
  assert.equal(statuses, [422, 422, 422, 422, 422, 422, 503, 503], JSON.stringify(replies.map((r) => r.json())));
  for (const r of replies.filter((x) => x.status === 422)) assert.match(r.json().error.message, /resolve|longer than/);
  const refused = replies.find((r) => r.status === 503)!;
  assert.is(refused.json().error.code, 'overloaded');
  assert.ok(refused.headers.get('retry-after'));
  assert.ok(queries > 0, 'the black hole saw the queries');
  assert.ok(Date.now() - started < 15_000, 'lookups were not bounded by the deadline');
});

test('localhost still resolves (to loopback, refused by the guard) without asking the resolver', async () => {
  const r = await post(server.url, '/images/edit', { input: 'http://localhost:1/a.png', operations: '[{"flip":"h"}]' });
  assert.is(r.status, 400);
  assert.is(r.json().error.code, 'input_url_forbidden');
});

test.after(async () => {
  await server.close();
  blackHole.close();
});
test.run();
