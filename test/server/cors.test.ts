// run-tests: parallel
// MATTE_CORS_ORIGINS: no CORS headers by default; for an allowed origin a preflight is answered
// without the API key, X-Api-Key may be sent, X-Image-Width/Height and X-Request-Id can be read,
// and errors carry the headers too (a browser can read a 401); `*` allows any origin.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gradient } from '../helpers/images.js';
import { get, post, startTestServer } from '../helpers/server.js';

const png = gradient(20, 10);
const APP = 'https://app.example.com';
const preflight = (origin: string) => ({
  method: 'OPTIONS',
  headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'x-api-key' },
});

test('default: no CORS headers, not even on a preflight', async () => {
  const server = await startTestServer();
  try {
    const r = await get(server.url, '/images/edit', preflight(APP));
    assert.is(r.headers.get('access-control-allow-origin'), null);
    const p = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' }, { headers: { Origin: APP } });
    assert.is(p.headers.get('access-control-allow-origin'), null);
  } finally {
    await server.close();
  }
});

test('listed origins: preflight without the key, X-Api-Key allowed, size and request id exposed, errors readable', async () => {
  const server = await startTestServer({ MATTE_CORS_ORIGINS: `${APP}, http://localhost:3000` });
  try {
    const pre = await get(server.url, '/images/edit', preflight(APP));
    assert.is(pre.status, 204);
    assert.is(pre.headers.get('access-control-allow-origin'), APP);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /X-Api-Key/i);
    assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(pre.headers.get('vary') ?? '', /Origin/);

    const other = await get(server.url, '/images/edit', preflight('https://evil.example'));
    assert.is(other.headers.get('access-control-allow-origin'), null);

    const r = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' }, { headers: { Origin: 'http://localhost:3000' } });
    assert.is(r.status, 200);
    assert.is(r.headers.get('access-control-allow-origin'), 'http://localhost:3000');
    const exposed = (r.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const h of ['x-image-width', 'x-image-height', 'x-request-id']) assert.ok(exposed.includes(h), exposed);

    const denied = await post(server.url, '/images/edit', { input: png, operations: '[]' }, { key: null, headers: { Origin: APP } });
    assert.is(denied.status, 401);
    assert.is(denied.headers.get('access-control-allow-origin'), APP, 'a browser can read the error');
    assert.ok(denied.headers.get('access-control-expose-headers'));
  } finally {
    await server.close();
  }
});

test('*: any origin', async () => {
  const server = await startTestServer({ MATTE_CORS_ORIGINS: '*' });
  try {
    const pre = await get(server.url, '/images/results/AAAAAAAAAAAAAAAAAAAAAAAA.png', { method: 'OPTIONS', headers: { Origin: 'https://any.example', 'Access-Control-Request-Method': 'GET' } });
    assert.is(pre.status, 204);
    assert.is(pre.headers.get('access-control-allow-origin'), '*');
    const r = await get(server.url, '/healthz', { headers: { Origin: 'https://any.example' } });
    assert.is(r.headers.get('access-control-allow-origin'), '*');
  } finally {
    await server.close();
  }
});

test.run();
