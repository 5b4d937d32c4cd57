// run-tests: parallel
// The people-facing pages over HTTP: public (no key), served from the package (the Swagger UI
// bundle from node_modules), with a Content-Security-Policy; unknown assets are the usual 404.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server?.close();
});

test('GET / and GET /docs need no key and carry a CSP that allows this origin only', async () => {
  for (const [path, title] of [['/', 'matte playground'], ['/docs', 'matte API reference']] as const) {
    const res = await fetch(`${server.url}${path}`);
    assert.is(res.status, 200, path);
    assert.is(res.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self' blob:(;|$)/);
    assert.is(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.match(html, new RegExp(`<title>${title}</title>`));
    assert.not.match(html, /https?:\/\/(?!example\.com)/, 'no absolute URL: nothing from another host');
    assert.not.match(html, /<script>|on(click|load)=/, 'no inline script');
  }
});

test('the assets, Swagger UI from node_modules included; HEAD works; anything else is 404', async () => {
  for (const [file, type] of [
    ['playground.js', 'text/javascript; charset=utf-8'],
    ['operations.js', 'text/javascript; charset=utf-8'],
    ['playground.css', 'text/css; charset=utf-8'],
    ['docs.js', 'text/javascript; charset=utf-8'],
    ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
    ['swagger-ui.css', 'text/css; charset=utf-8'],
  ] as const) {
    const res = await fetch(`${server.url}/assets/${file}`);
    assert.is(res.status, 200, file);
    assert.is(res.headers.get('content-type'), type, file);
    assert.ok((await res.arrayBuffer()).byteLength > 100, file);
  }
  const head = await fetch(`${server.url}/assets/swagger-ui-bundle.js`, { method: 'HEAD' });
  assert.is(head.status, 200);
  assert.ok(Number(head.headers.get('content-length')) > 500_000);
  for (const path of ['/assets/nope.js', '/assets/..%2Fpackage.json', '/assets/index.html', '/assets/swagger-ui.js.map']) {
    const res = await fetch(`${server.url}${path}`);
    assert.is(res.status, 404, path);
    assert.is((await res.json()).error.code, 'not_found');
  }
  const post = await fetch(`${server.url}/`, { method: 'POST' });
  assert.is(post.status, 405);
});

test('the API itself still needs the key', async () => {
  const res = await fetch(`${server.url}/images/edit`, { method: 'POST', body: new FormData() });
  assert.is(res.status, 401);
});

test.run();
