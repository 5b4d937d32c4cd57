// run-tests: parallel
// GET /docs in a real browser: Swagger UI, served by the server itself, renders every endpoint of
// /openapi.json; nothing is requested from another origin and the page's CSP is not violated.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBrowser, type Browser } from '../helpers/browser.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;

test.before(async () => {
  server = await startTestServer();
  browser = await openBrowser();
});

test.after(async () => {
  await browser?.close();
  await server?.close();
});

test('the API reference renders every endpoint from /openapi.json, offline', async () => {
  const { page } = browser;
  const response = await page.goto(`${server.url}/docs`);
  assert.is(response?.status(), 200);
  await page.locator('.opblock-summary-path', { hasText: '/images/remove-background' }).first().waitFor();
  const paths = await page.locator('.opblock-summary-path').allTextContents();
  const clean = paths.map((p) => p.replace(/\u200b/g, '').trim());
  for (const path of ['/images/edit', '/images/remove-background', '/images/results/{file}', '/healthz', '/readyz', '/openapi.json'])
    assert.ok(clean.includes(path), `${path} is listed (got ${clean.join(', ')})`);
  assert.ok(await page.getByText('matte', { exact: false }).first().isVisible());

  // Expanding an endpoint shows its form fields, from the same schema the server validates with.
  await page.locator('.opblock-summary', { hasText: '/images/edit' }).first().click();
  await browser.screenshot('docs.png');
  await page.locator('.opblock-body').getByText('a JSON array of operations').first().waitFor();

  const foreign = browser.requests.filter((url) => !url.startsWith(server.url) && !url.startsWith('data:') && !url.startsWith('blob:'));
  assert.equal(foreign, [], 'no request leaves the server');
  const csp = browser.console.filter((m) => /Content Security Policy|pageerror/i.test(m));
  assert.equal(csp, [], 'no CSP violation, no page error');
});

test.run();
