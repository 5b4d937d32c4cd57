// run-tests: parallel
// Behind proxies (MATTE_TRUSTED_PROXIES): the client's address is read from X-Forwarded-For or
// Forwarded only when the peer is trusted, and it is what the wrong-key throttle counts and the
// access log writes; a right key is never refused 429 for another client's wrong keys. Clients are
// told apart by their loopback source address (127.0.0.2, 127.0.0.3 ...: all of 127/8 is loopback).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http, { type IncomingMessage } from 'node:http';
import { rm } from 'node:fs/promises';
import { clientAddress, compileTrust } from '../../server/client-address.js';
import { ConfigError, loadConfig } from '../../server/config.js';
import { MAX_TRUSTED_HOPS } from '../../server/config-proxy.js';
import { gradient } from '../helpers/images.js';
import { captureLog, type CapturedLog } from '../helpers/log.js';
import { NGINX, startNginx } from '../helpers/nginx.js';
import { freePort } from '../helpers/ports.js';
import { form, rawRequest, startTestServer, statusOf, tempDir, TEST_KEY, type Fields, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const png = gradient(16, 16);
const EDIT: Fields = { input: png, operations: '[{"flip":"h"}]', output: 'raw' };
const GUESSER = '127.0.0.2';
const PROXY = '127.0.0.3';

interface Logged {
  server: TestServer;
  log: CapturedLog;
}

/** The real server on loopback, its log lines collected. */
async function start(env: Record<string, string>): Promise<Logged> {
  const log = captureLog();
  const server = await startTestServer({ MATTE_AUTH_FAILURES_PER_MINUTE: '3', ...env }, { logger: log.logger });
  return { server, log };
}

let sequence = 0;

/** POSTs `fields` to /images/edit from the loopback address `from`; resolves to the status and the request's id. */
async function postFrom(server: { port: number }, from: string, headers: Record<string, string>, fields: Fields = EDIT): Promise<{ status: number; id: string; body: string }> {
  const id = `proxy-test-${++sequence}`;
  const encoded = new Response(form(fields));
  const type = encoded.headers.get('content-type')!;
  const body = Buffer.from(await encoded.arrayBuffer());
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: server.port, method: 'POST', path: '/images/edit', localAddress: from, agent: false, headers: { 'X-Request-Id': id, 'Content-Type': type, 'Content-Length': body.length, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, id, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The access line of the request `id`. */
function accessLine(logged: Logged, id: string): Promise<Record<string, unknown>> {
  return waitFor(`the access line of ${id}`, () => logged.log.lines().find((l) => l.msg === 'request' && l.reqId === id));
}

// ---- the setting ------------------------------------------------------------------------------------

test('MATTE_TRUSTED_PROXIES: addresses, ranges and names, or hops; unset or 0 trusts nothing; a bad value names the variable', () => {
  assert.is(loadConfig({}).trustedProxies, undefined);
  assert.is(loadConfig({ MATTE_TRUSTED_PROXIES: '0' }).trustedProxies, undefined);
  assert.equal(loadConfig({ MATTE_TRUSTED_PROXIES: '2' }).trustedProxies, { hops: 2 });
  assert.equal(loadConfig({ MATTE_TRUSTED_PROXIES: 'loopback, 10.0.0.0/8,fd00::/8 , 192.0.2.7' }).trustedProxies, { addresses: ['loopback', '10.0.0.0/8', 'fd00::/8', '192.0.2.7'] });
  for (const bad of ['proxy.example.com', '10.0.0.0/33', ',', `${MAX_TRUSTED_HOPS + 1}`, 'true', '-1']) {
    assert.throws(() => loadConfig({ MATTE_TRUSTED_PROXIES: bad }), (e: Error) => e instanceof ConfigError && e.message.startsWith('MATTE_TRUSTED_PROXIES'), bad);
  }
});

// ---- the walk, without a server: the bounded work ---------------------------------------------------

const requestFrom = (peer: string, headers: Record<string, string>) => ({ headers, socket: { remoteAddress: peer } }) as unknown as IncomingMessage;

test('the walk: right to left through the trusted hops, an address that is not an IP ends it, X-Forwarded-For before Forwarded', () => {
  const one = compileTrust({ hops: 1 });
  const listed = compileTrust({ addresses: ['10.0.0.0/8'] });
  assert.is(clientAddress(requestFrom('10.0.0.1', { 'x-forwarded-for': 'evil, 198.51.100.4' }), one), '198.51.100.4');
  assert.is(clientAddress(requestFrom('10.0.0.1', { 'x-forwarded-for': 'evil, 198.51.100.4' }), compileTrust({ hops: 2 })), '198.51.100.4', '"evil" is not an address: the hop that named it');
  assert.is(clientAddress(requestFrom('10.0.0.1', { 'x-forwarded-for': '203.0.113.9, 198.51.100.4, 10.0.0.2' }), listed), '198.51.100.4');
  assert.is(clientAddress(requestFrom('10.0.0.1', { 'x-forwarded-for': '10.0.0.3, 10.0.0.2' }), listed), '10.0.0.3', 'all trusted: the furthest');
  assert.is(clientAddress(requestFrom('192.0.2.1', { 'x-forwarded-for': '198.51.100.4' }), listed), '192.0.2.1', 'an untrusted peer');
  assert.is(clientAddress(requestFrom('10.0.0.1', { forwarded: 'for=192.0.2.60;proto=https;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"' }), one), '2001:db8:cafe::17');
  assert.is(clientAddress(requestFrom('10.0.0.1', { forwarded: 'for="192.0.2.60:8080"' }), one), '192.0.2.60');
  for (const hidden of ['for=_hidden', 'for=unknown', 'for=_SEVKISEK', 'proto=https', 'for=""']) {
    assert.is(clientAddress(requestFrom('10.0.0.1', { forwarded: hidden }), one), '10.0.0.1', hidden);
  }
  assert.is(clientAddress(requestFrom('10.0.0.1', { forwarded: 'for=192.0.2.60', 'x-forwarded-for': '198.51.100.4' }), one), '198.51.100.4', 'X-Forwarded-For wins');
  assert.is(clientAddress(requestFrom('10.0.0.1', { forwarded: 'for="[2001:db8::1' }), one), '10.0.0.1', 'a Forwarded that does not parse is ignored');
  assert.is(clientAddress(requestFrom('10.0.0.1', { 'x-forwarded-for': '198.51.100.4' }), undefined), '10.0.0.1', 'nothing trusted');
});

test('10,000 entries cost at most MAX_TRUSTED_HOPS + 1 trust checks, and a chain longer than that is ignored', () => {
  // Both headers are read in one pass (proxy-addr's and forwarded-parse's loops over the characters;
  // Node refuses headers over 16 KiB before that); the walk's checks are what grows with the hops.
  let checks = 0;
  const all = (address: string, index: number) => (checks++, index >= 0 && address !== '');
  const xff = Array.from({ length: 10_000 }, (_, i) => `10.0.${i >> 8 & 255}.${i & 255}`).join(', ');
  assert.is(clientAddress(requestFrom('10.9.9.9', { 'x-forwarded-for': xff }), all), '10.9.9.9');
  assert.ok(checks <= MAX_TRUSTED_HOPS + 1, `${checks} checks`);
  checks = 0;
  const forwarded = Array.from({ length: 10_000 }, (_, i) => `for="[2001:db8::${(i % 65535).toString(16)}]:80"`).join(', ');
  assert.is(clientAddress(requestFrom('10.9.9.9', { forwarded }), all), '10.9.9.9');
  assert.ok(checks <= MAX_TRUSTED_HOPS + 1, `${checks} checks`);
  checks = 0;
  const hops = (address: string, index: number) => (checks++, index < 3);
  assert.is(clientAddress(requestFrom('10.9.9.9', { 'x-forwarded-for': xff }), hops), '10.0.39.13', 'the hop count stops the walk');
  assert.is(checks, 4);
});

// ---- through the real server on loopback -------------------------------------------------------------

test('nothing trusted: forwarding headers change nothing, and the first one is logged once with the setting to set', async () => {
  const logged = await start({});
  try {
    const first = await postFrom(logged.server, GUESSER, { 'X-Api-Key': TEST_KEY, 'X-Forwarded-For': '198.51.100.4' });
    assert.is(first.status, 200, first.body);
    const line = await accessLine(logged, first.id);
    assert.is(line.client, GUESSER);
    assert.is(line.peer, GUESSER);
    const forwarded = await postFrom(logged.server, GUESSER, { 'X-Api-Key': TEST_KEY, Forwarded: 'for=198.51.100.5' });
    assert.is((await accessLine(logged, forwarded.id)).client, GUESSER);
    // A guesser cannot escape the throttle by naming other addresses: three keys, then 429.
    for (let i = 0; i < 3; i++) assert.is((await postFrom(logged.server, GUESSER, { 'X-Api-Key': `guess-${i}`, 'X-Forwarded-For': `198.51.100.${10 + i}` })).status, 401);
    const refused = await postFrom(logged.server, GUESSER, { 'X-Api-Key': 'guess-3', 'X-Forwarded-For': '198.51.100.99' });
    assert.is(refused.status, 429, refused.body);
    const told = logged.log.lines().filter((l) => typeof l.msg === 'string' && l.msg.includes('MATTE_TRUSTED_PROXIES'));
    assert.is(told.length, 1, 'said once');
    assert.is(told[0]!.level, 40);
    assert.is(told[0]!.peer, GUESSER);
  } finally {
    await logged.server.close();
  }
});

test('a trusted proxy: the address it names is counted and logged; the same header from an untrusted peer is not', async () => {
  const logged = await start({ MATTE_TRUSTED_PROXIES: PROXY });
  try {
    const through = await postFrom(logged.server, PROXY, { 'X-Api-Key': TEST_KEY, 'X-Forwarded-For': '198.51.100.4' });
    assert.is(through.status, 200, through.body);
    const line = await accessLine(logged, through.id);
    assert.is(line.client, '198.51.100.4');
    assert.is(line.peer, PROXY);
    const viaForwarded = await postFrom(logged.server, PROXY, { 'X-Api-Key': TEST_KEY, Forwarded: 'for="[2001:db8::7]:4711";proto=https' });
    assert.is((await accessLine(logged, viaForwarded.id)).client, '2001:db8::7');
    const direct = await postFrom(logged.server, GUESSER, { 'X-Api-Key': TEST_KEY, 'X-Forwarded-For': '198.51.100.4' });
    assert.is((await accessLine(logged, direct.id)).client, GUESSER);

    // 198.51.100.7 uses up its wrong keys; 198.51.100.8 behind the same proxy still gets its 401.
    for (let i = 0; i < 3; i++) assert.is((await postFrom(logged.server, PROXY, { 'X-Api-Key': `guess-${i}`, 'X-Forwarded-For': '198.51.100.7' })).status, 401);
    const refused = await postFrom(logged.server, PROXY, { 'X-Api-Key': 'guess-3', 'X-Forwarded-For': '198.51.100.7' });
    assert.is(refused.status, 429);
    assert.is(JSON.parse(refused.body).error.code, 'too_many_failures');
    const counted = await accessLine(logged, refused.id);
    assert.is(counted.client, '198.51.100.7');
    assert.is(counted.code, 'too_many_failures');
    assert.is((await postFrom(logged.server, PROXY, { 'X-Api-Key': 'guess-3', 'X-Forwarded-For': '198.51.100.8' })).status, 401, 'another client behind the proxy');
    assert.is((await postFrom(logged.server, PROXY, { 'X-Api-Key': 'guess-4' })).status, 401, 'the proxy itself (no header)');
  } finally {
    await logged.server.close();
  }
});

test('IPv6 clients are counted by /64: a guesser moving through its own addresses is slowed, another /64 and a right key are not', async () => {
  const logged = await start({ MATTE_TRUSTED_PROXIES: PROXY });
  try {
    const from = (client: string, key: string) => postFrom(logged.server, PROXY, { 'X-Api-Key': key, 'X-Forwarded-For': client });
    // Three different wrong keys, each from a new address of 2001:db8:1:2::/64, use up the block's count.
    for (let i = 0; i < 3; i++) assert.is((await from(`2001:db8:1:2::${i + 1}`, `guess-${i}`)).status, 401);
    const refused = await from('2001:db8:1:2:ffff:ffff:ffff:ffff', 'guess-3');
    assert.is(refused.status, 429, refused.body);
    assert.is(JSON.parse(refused.body).error.code, 'too_many_failures');
    assert.is((await from('2001:db8:1:3::1', 'guess-3')).status, 401, 'the next /64');
    assert.is((await from('2001:db8:1:2::99', TEST_KEY)).status, 200, 'a right key from the same /64');
    // IPv4 is counted per address, as before.
    for (let i = 0; i < 3; i++) assert.is((await from('198.51.100.20', `guess-${i}`)).status, 401);
    assert.is((await from('198.51.100.21', 'guess-3')).status, 401, 'the next IPv4 address');
  } finally {
    await logged.server.close();
  }
});

test('a spoofed chain (X-Forwarded-For: evil, real) yields the hop the count says', async () => {
  for (const [hops, client] of [['1', '198.51.100.4'], ['2', '203.0.113.66']] as const) {
    const logged = await start({ MATTE_TRUSTED_PROXIES: hops });
    try {
      const r = await postFrom(logged.server, PROXY, { 'X-Api-Key': TEST_KEY, 'X-Forwarded-For': '203.0.113.66, 198.51.100.4' });
      assert.is(r.status, 200, r.body);
      assert.is((await accessLine(logged, r.id)).client, client, `${hops} hops`);
    } finally {
      await logged.server.close();
    }
  }
});

test('malformed forwarding headers are ignored (the proxy is the client) or refused 4xx, never 5xx', async () => {
  const logged = await start({ MATTE_TRUSTED_PROXIES: 'loopback' });
  try {
    const cases: Array<Record<string, string>> = [
      { 'X-Forwarded-For': '' },
      { 'X-Forwarded-For': ','.repeat(9_999) }, // 10,000 empty entries
      { 'X-Forwarded-For': 'not an address, [::1]:80, 999.1.1.1' },
      { 'X-Forwarded-For': `${'127.0.0.1, '.repeat(1_200)}127.0.0.1` }, // more trusted hops than followed
      { Forwarded: '' },
      { Forwarded: 'for=' },
      { Forwarded: ';;;===,,,' },
      { Forwarded: 'for="[2001:db8::1' },
      { Forwarded: `${'for=_hidden, '.repeat(1_000)}for=unknown` },
      { Forwarded: 'for=\u00ff\u00fe garbage' },
    ];
    for (const headers of cases) {
      const r = await postFrom(logged.server, PROXY, { 'X-Api-Key': TEST_KEY, ...headers });
      const what = JSON.stringify(headers).slice(0, 80);
      assert.is(r.status, 200, `${what}: ${r.body}`);
      assert.is((await accessLine(logged, r.id)).client, PROXY, what);
    }
    // Beyond Node's header limit (16 KiB): 431 from the HTTP parser; a control character: 400.
    const huge = await rawRequest(logged.server.port, [`POST /images/edit HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${'g@rb;ge='.repeat(8 * 1024)}\r\n\r\n`]);
    assert.is(statusOf(huge.text), 431, huge.text.slice(0, 200));
    const control = await rawRequest(logged.server.port, ['POST /images/edit HTTP/1.1\r\nHost: x\r\nForwarded: for=\x01\x02\r\n\r\n']);
    assert.is(statusOf(control.text), 400, control.text.slice(0, 200));
    assert.not.ok(logged.log.lines().some((l) => (l.level as number) >= 50), 'no error logged');
  } finally {
    await logged.server.close();
  }
});

// ---- the throttle slows the guesser, not the neighbours --------------------------------------------------

for (const through of ['an untrusted proxy', 'a trusted proxy'] as const) {
  test(`one client's wrong keys in a loop never get another client's right keys 429, through ${through}`, async () => {
    const trusted = through === 'a trusted proxy';
    const logged = await start(trusted ? { MATTE_TRUSTED_PROXIES: PROXY, MATTE_METRICS_KEY: 'scrape-secret' } : { MATTE_METRICS_KEY: 'scrape-secret' });
    try {
      // Behind the proxy both clients may even share one address (a NAT): 198.51.100.9.
      const guesser = { 'X-Forwarded-For': '198.51.100.9' };
      const neighbours = [{ 'X-Forwarded-For': '198.51.100.9' }, { 'X-Forwarded-For': '198.51.100.10' }];
      const wrong: number[] = [];
      const right: number[] = [];
      await Promise.all([
        (async () => {
          // A stale key in a retry loop, then a guesser rotating keys.
          for (let i = 0; i < 8; i++) wrong.push((await postFrom(logged.server, PROXY, { 'X-Api-Key': 'stale-key', ...guesser })).status);
          for (let i = 0; i < 8; i++) wrong.push((await postFrom(logged.server, PROXY, { 'X-Api-Key': `guess-${i}`, ...guesser })).status);
        })(),
        (async () => {
          for (let i = 0; i < 12; i++) right.push((await postFrom(logged.server, PROXY, { 'X-Api-Key': TEST_KEY, ...neighbours[i % 2]! })).status);
        })(),
      ]);
      assert.equal(right, Array(12).fill(200), `right keys: ${right}`);
      assert.equal(wrong.slice(0, 3), [401, 401, 401], `wrong keys: ${wrong}`);
      assert.equal(wrong.slice(3, 8), Array(5).fill(429), `the stale key in its loop: ${wrong}`);
      // The stale key was one of three different keys allowed: two guesses more, then 429.
      assert.equal(wrong.slice(8), [401, 401, 429, 429, 429, 429, 429, 429], `the rotating guesser: ${wrong}`);
      // The metrics key: the same rule, the same table.
      const metrics = (key: string) => fetch(`${logged.server.url}/metrics`, { headers: { Authorization: `Bearer ${key}` } }).then((r) => r.status);
      assert.is(await metrics('scrape-secret'), 200);
      for (let i = 0; i < 3; i++) assert.is(await metrics(`wrong-${i}`), 401);
      assert.is(await metrics('wrong-3'), 429);
      assert.is(await metrics('wrong-0'), 401, 'a key already counted may fail up to its own count');
      assert.is(await metrics('scrape-secret'), 200, 'the right metrics key still serves');
    } finally {
      await logged.server.close();
    }
  });
}

// ---- docs/deploy.md's nginx in front ------------------------------------------------------------------

if (!NGINX) {
  console.log('skip trusted-proxies through nginx: nginx is not installed (apt-get install nginx)');
} else {
  test("through docs/deploy.md's nginx: the address nginx saw is the client, whatever the client wrote; its wrong keys are its own", async () => {
    const logged = await start({ MATTE_TRUSTED_PROXIES: '127.0.0.1' }); // nginx connects from 127.0.0.1
    const port = await freePort();
    const dir = await tempDir('matte-nginx-');
    const nginx = await startNginx(
      dir,
      `  server {
    listen 127.0.0.1:${port};
    client_max_body_size 26m;
    location / {
      proxy_pass http://127.0.0.1:${logged.server.port};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_request_buffering off;
    }
  }`,
      port,
    );
    const front = { port };
    try {
      const spoofing = await postFrom(front, GUESSER, { 'X-Api-Key': TEST_KEY, 'X-Forwarded-For': '127.0.0.9' });
      assert.is(spoofing.status, 200, spoofing.body);
      const line = await accessLine(logged, spoofing.id);
      assert.is(line.client, GUESSER);
      assert.is(line.peer, '127.0.0.1');
      for (let i = 0; i < 3; i++) assert.is((await postFrom(front, GUESSER, { 'X-Api-Key': `guess-${i}`, 'X-Forwarded-For': `127.0.0.${20 + i}` })).status, 401);
      assert.is((await postFrom(front, GUESSER, { 'X-Api-Key': 'guess-3' })).status, 429, 'the guesser, whatever it wrote');
      assert.is((await postFrom(front, GUESSER, { 'X-Api-Key': TEST_KEY })).status, 200, 'a right key from the same address');
      assert.is((await postFrom(front, '127.0.0.4', { 'X-Api-Key': 'guess-3' })).status, 401, 'another client behind nginx');
    } finally {
      await nginx.stop();
      await rm(dir, { recursive: true, force: true });
      await logged.server.close();
    }
  });
}

test.run();
