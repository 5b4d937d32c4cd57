// run-tests: parallel
// GET / in a real browser: choose an image, build operations with the form, run an edit and a
// remove-background against the real server, see the result; a bad operation shows its error
// code and path. The result image is read back from the page and decoded here.
import { readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openBrowser, SCREENSHOT_DIR, type Browser } from '../helpers/browser.js';
import { decode, disc, pixel } from '../helpers/images.js';
import { startTestServer, tempDir, TEST_KEY, type TestServer } from '../helpers/server.js';

let server: TestServer;
let browser: Browser;
let imagePath: string;
let imageHost: http.Server;

test.before(async () => {
  // Private addresses allowed: the URL input below is served from this machine's loopback.
  server = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*' });
  browser = await openBrowser();
  imagePath = join(await tempDir(), 'subject.png');
  await writeFile(imagePath, disc(320, 240, 70, [200, 30, 30], [255, 255, 255], { alpha: false }));
  const image = await readFile(imagePath);
  imageHost = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'image/png' }).end(image));
  await new Promise<void>((resolve) => imageHost.listen(0, '127.0.0.1', resolve));
});

test.after(async () => {
  imageHost?.close();
  await browser?.close();
  await server?.close();
});

/** The bytes of the result image shown on the page. */
async function resultBytes(): Promise<Buffer> {
  const bytes = await browser.page.evaluate(async () => {
    const img = document.getElementById('result-img') as HTMLImageElement;
    const data = new Uint8Array(await (await fetch(img.src)).arrayBuffer());
    return Array.from(data);
  });
  return Buffer.from(bytes);
}

async function waitForResult(): Promise<void> {
  const { page } = browser;
  await page.waitForFunction(() => /done in \d+ ms|failed/.test(document.getElementById('status')?.textContent ?? ''));
  const error = await page.locator('#error').isVisible();
  assert.not.ok(error, error ? await page.locator('#error').textContent() ?? '' : '');
  await page.locator('#result-img').waitFor({ state: 'visible' });
}

test('the page loads without a key, and an edit built with the form shows its result', async () => {
  const { page } = browser;
  const response = await page.goto(`${server.url}/`);
  assert.is(response?.status(), 200);
  assert.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'/);

  await page.getByLabel('Image file').setInputFiles(imagePath);
  await page.locator('#input-img').waitFor({ state: 'visible' });
  assert.match((await page.locator('#input-info').textContent()) ?? '', /320×240/);

  // The first operation is a resize: set its width, then add a blur and move it first.
  await page.getByLabel('width').fill('160');
  await page.getByLabel('Add an operation').selectOption('blur');
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.getByLabel('radius (0-250)').fill('1');
  await page.getByRole('button', { name: 'Move up: blur' }).click();
  assert.equal(await page.locator('#ops > li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.op)), ['blur', 'resize']);

  await page.getByLabel('Format').selectOption('webp');
  await page.getByLabel('X-Api-Key').fill(TEST_KEY);
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();

  const info = (await page.locator('#result-info').textContent()) ?? '';
  assert.match(info, /160×120/);
  assert.match(info, /image\/webp/);
  assert.match(info, /\d+ ms/);
  const image = await decode(await resultBytes());
  assert.is(image.width, 160);
  assert.is(image.height, 120);
  await browser.screenshot('playground-edit.png');

  // The JSON view shows what the form built.
  await page.getByRole('radio', { name: 'JSON' }).check();
  const json = JSON.parse(await page.getByLabel('Operations (a JSON array, applied in order)').inputValue());
  assert.equal(json, [{ blur: 1 }, { resize: { width: 160 } }]);
  await page.getByRole('radio', { name: 'Form' }).check();
});

test('remove-background shows the matted result side by side with the input', async () => {
  const { page } = browser;
  await page.getByRole('radio', { name: /Remove background/ }).check();
  await page.getByLabel('Format').selectOption('png');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  assert.match((await page.locator('#result-info').textContent()) ?? '', /320×240, .*image\/png/);
  const image = await decode(await resultBytes());
  assert.ok(image.hasAlpha);
  assert.ok(pixel(image, 0, 0)[3] < 10, `corner alpha ${pixel(image, 0, 0)[3]}`);
  assert.ok(pixel(image, 160, 120)[3] > 245, `centre alpha ${pixel(image, 160, 120)[3]}`);
  await browser.screenshot('playground-remove-background.png');
});

test("remove.bg's API: the same image through POST /v1.0/removebg with remove.bg's fields", async () => {
  const { page } = browser;
  await page.getByRole('radio', { name: /remove\.bg's API/ }).check();
  await page.getByLabel('size', { exact: true }).selectOption('full');
  await page.getByLabel('bg_color').fill('81d4fa');
  await page.getByLabel('Format').selectOption('auto');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  assert.match((await page.locator('#result-info').textContent()) ?? '', /320×240, .*image\/jpeg/);
  const image = await decode(await resultBytes());
  const corner = pixel(image, 2, 2);
  assert.ok(Math.max(...[0x81, 0xd4, 0xfa].map((v, i) => Math.abs(v - corner[i]!))) <= 3, `the background colour: ${corner}`);
  await browser.screenshot('playground-removebg.png');
});

test('a bad operation shows the error with its code and path, and marks the operation', async () => {
  const { page } = browser;
  await page.getByRole('radio', { name: /^Edit/ }).check();
  await page.getByLabel('radius (0-250)').fill('500');
  await page.getByRole('button', { name: 'Run' }).click();
  const error = page.locator('#error');
  await error.waitFor({ state: 'visible' });
  const text = (await error.textContent()) ?? '';
  assert.match(text, /400/);
  assert.match(text, /invalid_operations/);
  assert.match(text, /operations\[0\]\.blur/);
  assert.is(await page.locator('#ops > li').first().locator('fieldset').getAttribute('aria-invalid'), 'true');
  await browser.screenshot('playground-error.png');

  // The same from the JSON view; a wrong key is a 401 shown the same way.
  await page.getByRole('radio', { name: 'JSON' }).check();
  await page.getByLabel('Operations (a JSON array, applied in order)').fill('[{"resize":{"width":100}},{"flip":"x"}]');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.locator('#error', { hasText: 'operations[1].flip' }).waitFor();
  await page.getByLabel('X-Api-Key').fill('wrong');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.locator('#error', { hasText: 'unauthorized' }).waitFor();
  const csp = browser.console.filter((m) => /Content Security Policy|pageerror/i.test(m));
  assert.equal(csp, [], 'no CSP violation, no page error');
});

test('removeBackground then a background colour through edit (the README screenshot)', async () => {
  const { page } = browser;
  await page.getByLabel('X-Api-Key').fill(TEST_KEY);
  await page.getByRole('radio', { name: 'JSON' }).check();
  await page.getByLabel('Operations (a JSON array, applied in order)').fill('[{"removeBackground":true},{"background":"#9fd3ff"},{"resize":{"width":300}}]');
  await page.getByRole('radio', { name: 'Form' }).check();
  assert.equal(await page.locator('#ops > li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.op)), ['removeBackground', 'background', 'resize']);
  await page.getByLabel('Format').selectOption('png');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  const image = await decode(await resultBytes());
  assert.is(image.width, 300);
  const corner = pixel(image, 2, 2);
  assert.ok(Math.abs(corner[0] - 0x9f) < 8 && Math.abs(corner[2] - 0xff) < 8, `corner ${corner}`);
  assert.ok(pixel(image, 150, 112)[0] > 180, 'the subject stays red');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(SCREENSHOT_DIR, 'playground.png'), fullPage: true });
});

test('the responsive-image operations: from JSON to the form and back, then run', async () => {
  const { page } = browser;
  const list = [
    { resize: { width: 100, height: 100, fit: 'pad', gravity: { x: 0, y: 0 }, dpr: 2, background: '#00ff00' } },
    { sharpen: { sigma: 1, flat: 1 } },
    { extend: { top: 4, background: 'blue' } },
    { gamma: 1.2 },
  ];
  await page.getByRole('radio', { name: 'JSON' }).check();
  await page.getByLabel('Operations (a JSON array, applied in order)').fill(JSON.stringify(list));
  await page.getByRole('radio', { name: 'Form' }).check();
  assert.equal(await page.locator('#ops > li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.op)), ['resize', 'sharpen', 'extend', 'gamma']);
  await page.getByRole('radio', { name: 'JSON' }).check();
  assert.equal(JSON.parse(await page.getByLabel('Operations (a JSON array, applied in order)').inputValue()), list);
  await page.getByRole('radio', { name: 'Form' }).check();
  await page.getByLabel('Format').selectOption('png');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  const image = await decode(await resultBytes());
  // 320x240 in a 200x200 box at its top left, then 4 rows of blue above: green below the image.
  assert.equal([image.width, image.height], [200, 204]);
  const box = pixel(image, 100, 200);
  assert.ok(box[1] > 240 && box[0] < 10 && box[2] < 10, `the pad's colour ${box}`);
});

test('an image URL as input and output=url: the stored result is shown with its link', async () => {
  const { page } = browser;
  const url = `http://127.0.0.1:${(imageHost.address() as AddressInfo).port}/subject.png`;
  await page.getByRole('radio', { name: 'URL' }).check();
  await page.getByLabel('Image URL (fetched by the server)').fill(url);
  await page.getByLabel('Image URL (fetched by the server)').dispatchEvent('change');
  await page.locator('#input-img').waitFor({ state: 'visible' });
  await page.getByRole('radio', { name: 'JSON' }).check();
  await page.getByLabel('Operations (a JSON array, applied in order)').fill('[{"resize":{"width":64}}]');
  await page.getByLabel('Answer as').selectOption('url');
  await page.getByLabel('Format').selectOption('webp');
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  assert.match((await page.locator('#result-info').textContent()) ?? '', /64×48, .*image\/webp/);
  const link = await page.locator('#result-link').getAttribute('href');
  assert.match(link ?? '', new RegExp(`^${server.url}/images/results/[A-Za-z0-9_-]{24}\\.webp$`));
  const stored = await fetch(link!);
  assert.is(stored.status, 200);
  assert.is(stored.headers.get('content-type'), 'image/webp');
});

test('the operation list works from the keyboard: add, move, remove', async () => {
  const { page } = browser;
  await page.getByRole('radio', { name: 'Form' }).check();
  const ops = () => page.locator('#ops > li').evaluateAll((lis) => lis.map((li) => (li as HTMLElement).dataset.op));
  assert.equal(await ops(), ['resize']);
  await page.getByLabel('Add an operation').focus();
  await page.getByLabel('Add an operation').selectOption('flip');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  assert.equal(await ops(), ['resize', 'flip']);
  // The focus moved into the new operation's first field.
  assert.is(await page.evaluate(() => document.activeElement?.id), await page.getByLabel('direction').getAttribute('id'));
  await page.getByRole('button', { name: 'Move up: flip' }).focus();
  await page.keyboard.press('Enter');
  assert.equal(await ops(), ['flip', 'resize']);
  await page.getByRole('button', { name: 'Remove: resize' }).focus();
  await page.keyboard.press('Space');
  assert.equal(await ops(), ['flip']);
  assert.is(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Remove: flip');
});

// Last: it leaves the page with its staging set.
test('remove-background staged: a background image, a shadow and a square placement, format auto', async () => {
  const { page } = browser;
  await page.goto(`${server.url}/`);
  await page.getByLabel('Image file').setInputFiles(imagePath);
  await page.getByRole('radio', { name: /Remove background/ }).check();
  const backdrop = join(await tempDir(), 'backdrop.png');
  await writeFile(backdrop, disc(200, 120, 30, [30, 30, 200], [240, 240, 200], { alpha: false }));
  await page.getByLabel(/Background image/).setInputFiles(backdrop);
  await page.getByLabel('Shadow').selectOption('drop');
  await page.getByLabel(/Subject scale/).fill('80');
  await page.getByLabel('Aspect ratio').fill('1:1');
  await page.getByLabel('Format').selectOption('auto');
  await page.getByLabel('X-Api-Key').fill(TEST_KEY);
  await page.getByRole('button', { name: 'Run' }).click();
  await waitForResult();
  const info = (await page.locator('#result-info').textContent()) ?? '';
  assert.match(info, /image\/jpeg/);
  const result = await decode(await resultBytes());
  assert.is(result.width, result.height, 'padded to a square');
  const corner = pixel(result, 2, 2);
  assert.ok(Math.abs(corner[0] - 240) < 20 && Math.abs(corner[1] - 240) < 20 && Math.abs(corner[2] - 200) < 20, `the background image in the corner: ${corner}`);
  await browser.screenshot('playground-remove-background-staged.png');
});

test.run();
