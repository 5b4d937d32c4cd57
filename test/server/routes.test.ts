// run-tests: parallel
// Every route through real HTTP on loopback: health, readiness, OpenAPI, 404/405, both image
// endpoints in both output modes, and each validation error of docs/api.md, "Errors".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { decode, disc, formatOf, gradient, makeGif, pixel, solid } from '../helpers/images.js';
import { captureLog } from '../helpers/log.js';
import { get, post, startTestServer, tempDir, type Reply, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let server: TestServer;
const png = gradient(64, 48);

function assertError(reply: Reply, status: number, code: string, path?: string) {
  assert.is(reply.status, status, reply.body.toString());
  assert.match(reply.headers.get('content-type') ?? '', /application\/json/);
  const body = reply.json();
  assert.is(body.error.code, code, reply.body.toString());
  assert.type(body.error.message, 'string');
  if (path !== undefined) assert.is(body.error.path, path);
  assert.ok(reply.headers.get('x-request-id'));
}

test.before(async () => {
  server = await startTestServer({ MATTE_MAX_INPUT_PIXELS: '1000000', MATTE_MAX_ANIMATION_FRAMES: '5' });
});
test.after(async () => {
  await server.close();
});

// ---- service routes --------------------------------------------------------------------------

test('GET /healthz is 200 {"status":"ok"} with an X-Request-Id', async () => {
  const r = await get(server.url, '/healthz');
  assert.is(r.status, 200);
  assert.equal(r.json(), { status: 'ok' });
  assert.match(r.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
});

test('a well-formed incoming X-Request-Id is kept, a bad one replaced', async () => {
  const kept = await get(server.url, '/healthz', { headers: { 'X-Request-Id': 'proxy-id.42' } });
  assert.is(kept.headers.get('x-request-id'), 'proxy-id.42');
  const replaced = await get(server.url, '/healthz', { headers: { 'X-Request-Id': 'bad id with spaces' } });
  assert.is.not(replaced.headers.get('x-request-id'), 'bad id with spaces');
});

test('GET /readyz is 200 once the model is loaded and the store writable', async () => {
  const r = await get(server.url, '/readyz');
  assert.is(r.status, 200);
  assert.is(r.json().status, 'ready');
  assert.is(r.json().model, 'u2netp');
});

test('GET /openapi.json is an OpenAPI 3.1 document of every route, its schema from lib', async () => {
  const r = await get(server.url, '/openapi.json');
  assert.is(r.status, 200);
  const doc = r.json();
  assert.is(doc.openapi, '3.1.0');
  for (const path of ['/images/edit', '/images/remove-background', '/images/results/{file}', '/healthz', '/readyz', '/openapi.json']) {
    assert.ok(doc.paths[path], path);
  }
  const editForm = doc.paths['/images/edit'].post.requestBody.content['multipart/form-data'].schema;
  assert.equal(Object.keys(editForm.properties).sort(), ['anim', 'background_image', 'format', 'input', 'model', 'operations', 'output', 'quality', 'refine']);
  const rbForm = doc.paths['/images/remove-background'].post.requestBody.content['multipart/form-data'].schema;
  assert.equal(Object.keys(rbForm.properties).sort(), ['background', 'background_image', 'channels', 'format', 'input', 'model', 'output', 'place', 'refine', 'roi', 'semitransparency', 'shadow', 'size', 'trim', 'trim_margin']);
  assert.equal(rbForm.properties.format.enum, ['png', 'webp', 'jpeg', 'auto']);
  assert.equal(editForm.properties.format.enum, ['png', 'webp', 'jpeg', 'gif', 'avif', 'auto']);
  const ops = editForm.properties.operations.contentSchema;
  assert.is(ops.maxItems, 20);
  const byKey = Object.fromEntries(ops.items.anyOf.map((o: any) => { const key = Object.keys(o.properties)[0]!; return [key, o.properties[key]]; }));
  // The specification's ten and the extensions (docs/api.md, "Extensions: staged cut-outs", "Extensions: responsive images").
  assert.equal(Object.keys(byKey).sort(), ['background', 'backgroundImage', 'blur', 'brightness', 'contrast', 'crop', 'extend', 'flip', 'gamma', 'place', 'removeBackground', 'resize', 'rotate', 'saturation', 'shadow', 'sharpen', 'size', 'trim']);
  assert.equal(byKey.resize.properties.fit.enum, ['contain', 'cover', 'scale-down', 'crop', 'pad', 'fill']);
  assert.is(byKey.gamma.maximum, 10);
  assert.is(byKey.blur.maximum, 250);
  assert.is(byKey.blur.minimum, 0);
  assert.is(byKey.resize.properties.width.maximum, 10000);
  assert.is(byKey.brightness.minimum, 0);
  assert.equal(doc.components.securitySchemes.ApiKey, { type: 'apiKey', in: 'header', name: 'X-Api-Key' });
});

test('an unknown path is 404 not_found as JSON', async () => {
  assertError(await get(server.url, '/nope'), 404, 'not_found');
  assertError(await get(server.url, '/images'), 404, 'not_found');
});

test('a known path with a wrong method is 405 with Allow', async () => {
  const r = await get(server.url, '/images/edit');
  assertError(r, 405, 'method_not_allowed');
  assert.match(r.headers.get('allow') ?? '', /POST/);
  const d = await get(server.url, '/healthz', { method: 'DELETE' });
  assertError(d, 405, 'method_not_allowed');
  assert.match(d.headers.get('allow') ?? '', /GET/);
  assert.match(d.headers.get('allow') ?? '', /HEAD/);
  const p = await get(server.url, '/images/results/abc.png', { method: 'POST' });
  assertError(p, 405, 'method_not_allowed');
});

test('OPTIONS on a known path lists the methods', async () => {
  const r = await get(server.url, '/images/remove-background', { method: 'OPTIONS' });
  assert.is(r.status, 204);
  assert.match(r.headers.get('allow') ?? '', /POST/);
});

// ---- /images/edit ------------------------------------------------------------------------------

test('edit, output=raw: the image, its media type, length and size headers', async () => {
  const r = await post(server.url, '/images/edit', { input: png, operations: JSON.stringify([{ resize: { width: 32 } }]), output: 'raw' });
  assert.is(r.status, 200);
  assert.is(r.headers.get('content-type'), 'image/png');
  assert.is(Number(r.headers.get('content-length')), r.body.length);
  assert.is(r.headers.get('x-image-width'), '32');
  assert.is(r.headers.get('x-image-height'), '24');
  const image = await decode(r.body);
  assert.is(image.width, 32);
  assert.is(image.height, 24);
});

for (const format of ['png', 'webp', 'jpeg', 'gif', 'avif'] as const) {
  test(`edit, output=raw, format=${format}: the right bytes and Content-Type`, async () => {
    const r = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw', format, quality: '70' });
    assert.is(r.status, 200, r.body.toString());
    assert.is(formatOf(r.body), format);
    assert.is(r.headers.get('content-type'), `image/${format}`);
  });
}

test('edit, output=url (the default): {id, url}, the url absolute and downloadable', async () => {
  const r = await post(server.url, '/images/edit', { input: png, operations: '[{"rotate":90}]' });
  assert.is(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  const { id, url } = r.json();
  assert.match(id, /^[A-Za-z0-9_-]{24}$/);
  assert.is(url, `${server.url}/images/results/${id}.png`);
  const d = await get(url, '');
  assert.is(d.status, 200);
  const image = await decode(d.body);
  assert.is(image.width, 48);
  assert.is(image.height, 64);
});

test('edit: operations run in order, booleans and case are accepted', async () => {
  const input = solid(10, 10, [255, 0, 0, 0]);
  const r = await post(server.url, '/images/edit', { input, operations: '[{"background":"#00FF00"},{"brightness":0.5}]', output: 'RAW', format: 'PNG', anim: 'FALSE' });
  assert.is(r.status, 200, r.body.toString());
  const image = await decode(r.body);
  const p = pixel(image, 5, 5);
  assert.ok(Math.abs(p[1] - 128) <= 2 && p[0] <= 2 && p[3] === 255, String(p));
});

test('edit: an animated gif keeps its frames with anim=true and gives one with anim=0', async () => {
  const gif = makeGif(8, 8, [[255, 0, 0], [0, 255, 0], [0, 0, 255]]);
  const all = await post(server.url, '/images/edit', { input: gif, operations: '[{"flip":"v"}]', output: 'raw', format: 'gif' });
  assert.is(all.status, 200);
  const one = await post(server.url, '/images/edit', { input: gif, operations: '[{"flip":"v"}]', output: 'raw', format: 'gif', anim: '0' });
  assert.is(one.status, 200);
  assert.ok(all.body.length > one.body.length);
});

test('edit: invalid_operations carries the path of the offending value', async () => {
  const r = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"},{"rotate":90},{"blur":300}]' });
  assertError(r, 400, 'invalid_operations', 'operations[2].blur');
  const w = await post(server.url, '/images/edit', { input: png, operations: '[{"resize":{"width":20000}}]' });
  assertError(w, 400, 'invalid_operations', 'operations[0].resize.width');
  const two = await post(server.url, '/images/edit', { input: png, operations: '[{"removeBackground":true},{"removeBackground":true}]' });
  assertError(two, 400, 'invalid_operations', 'operations[1].removeBackground');
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[]' }), 400, 'invalid_operations', 'operations');
  assertError(await post(server.url, '/images/edit', { input: png, operations: JSON.stringify(Array(21).fill({ flip: 'h' })) }), 400, 'invalid_operations');
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[{"blur":"2"}]' }), 400, 'invalid_operations', 'operations[0].blur');
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[{"blur":1,"flip":"h"}]' }), 400, 'invalid_operations', 'operations[0]');
});

test('edit: operations missing is 400 invalid_operations, not JSON is 400 invalid_json', async () => {
  assertError(await post(server.url, '/images/edit', { input: png }), 400, 'invalid_operations', 'operations');
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[{"blur":1}' }), 400, 'invalid_json', 'operations');
});

test('edit: bad field values are 400 invalid_field with the field as path', async () => {
  const ops = '[{"flip":"h"}]';
  assertError(await post(server.url, '/images/edit', { input: png, operations: ops, format: 'bmp' }), 400, 'invalid_field', 'format');
  assertError(await post(server.url, '/images/edit', { input: png, operations: ops, output: 'file' }), 400, 'invalid_field', 'output');
  assertError(await post(server.url, '/images/edit', { input: png, operations: ops, anim: 'yes' }), 400, 'invalid_field', 'anim');
  for (const quality of ['0', '101', '50.5', 'high', '']) {
    assertError(await post(server.url, '/images/edit', { input: png, operations: ops, quality }), 400, 'invalid_field', 'quality');
  }
  // quality is validated for every format, even where it is ignored
  assertError(await post(server.url, '/images/edit', { input: png, operations: ops, format: 'png', quality: '0' }), 400, 'invalid_field', 'quality');
  assert.is((await post(server.url, '/images/edit', { input: png, operations: ops, format: 'png', quality: '100', output: 'raw' })).status, 200);
});

test('edit: an unknown field is 400 unknown_field; a repeated one 400 invalid_field', async () => {
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', qualty: '50' }), 400, 'unknown_field', 'qualty');
  assertError(await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', trim: 'true' }), 400, 'unknown_field', 'trim');
  const data = new FormData();
  data.append('input', new Blob([new Uint8Array(png)]), 'a.png');
  data.append('operations', '[{"flip":"h"}]');
  data.append('format', 'png');
  data.append('format', 'webp');
  const res = await fetch(`${server.url}/images/edit`, { method: 'POST', body: data, headers: { 'X-Api-Key': 'test-key-0123456789abcdef' } });
  assert.is(res.status, 400);
  assert.is((await res.json()).error.path, 'format');
});

test('input: missing is 400 input_missing; both file and URL 400; another scheme 400', async () => {
  assertError(await post(server.url, '/images/edit', { operations: '[{"flip":"h"}]' }), 400, 'input_missing', 'input');
  const data = new FormData();
  data.append('input', new Blob([new Uint8Array(png)]), 'a.png');
  data.append('input', 'http://127.0.0.1:1/x.png');
  data.append('operations', '[{"flip":"h"}]');
  const res = await fetch(`${server.url}/images/edit`, { method: 'POST', body: data, headers: { 'X-Api-Key': 'test-key-0123456789abcdef' } });
  assert.is(res.status, 400);
  assert.is((await res.json()).error.path, 'input');
  assertError(await post(server.url, '/images/edit', { input: 'file:///etc/passwd', operations: '[{"flip":"h"}]' }), 400, 'invalid_field', 'input');
  assertError(await post(server.url, '/images/edit', { input: 'not a url', operations: '[{"flip":"h"}]' }), 400, 'invalid_field', 'input');
  assertError(await post(server.url, '/images/edit', { operations: '[{"flip":"h"}]', other: { data: png, filename: 'x.png' } }), 400, 'unknown_field', 'other');
});

test('a file that is not an accepted image is 415 unsupported_image (by content, not name)', async () => {
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
  assertError(await post(server.url, '/images/edit', { input: { data: svg, filename: 'a.png', type: 'image/png' }, operations: '[{"flip":"h"}]' }), 415, 'unsupported_image');
  assertError(await post(server.url, '/images/edit', { input: Buffer.alloc(0), operations: '[{"flip":"h"}]' }), 415, 'unsupported_image');
  assertError(await post(server.url, '/images/edit', { input: png.subarray(0, 60), operations: '[{"flip":"h"}]' }), 415, 'unsupported_image');
});

test('more pixels than MATTE_MAX_INPUT_PIXELS is 413 image_too_large', async () => {
  const big = solid(1001, 1000, [1, 2, 3]);
  assertError(await post(server.url, '/images/edit', { input: big, operations: '[{"flip":"h"}]' }), 413, 'image_too_large');
});

test('more frames than MATTE_MAX_ANIMATION_FRAMES is 413 image_too_large; with anim=false one frame is used', async () => {
  const colours: Array<[number, number, number]> = [[1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]];
  const gif = makeGif(4, 4, colours);
  assertError(await post(server.url, '/images/edit', { input: gif, operations: '[{"flip":"h"}]', format: 'gif' }), 413, 'image_too_large');
  assert.is((await post(server.url, '/images/edit', { input: gif, operations: '[{"flip":"h"}]', format: 'gif', anim: 'false', output: 'raw' })).status, 200);
});

test('a body that is not multipart is 400 invalid_multipart', async () => {
  const r = await get(server.url, '/images/edit', { method: 'POST', body: JSON.stringify({ operations: [] }), headers: { 'Content-Type': 'application/json', 'X-Api-Key': 'test-key-0123456789abcdef' } });
  assertError(r, 400, 'invalid_multipart');
});

// ---- /images/remove-background -------------------------------------------------------------------

test('remove-background, raw with trim: transparent background, cropped to the subject', async () => {
  const input = disc(96, 96, 24, [220, 30, 30], [255, 255, 255], { alpha: false });
  const r = await post(server.url, '/images/remove-background', { input, output: 'raw', trim: 'true' });
  assert.is(r.status, 200, r.body.toString());
  assert.is(r.headers.get('content-type'), 'image/png');
  const image = await decode(r.body);
  assert.ok(image.hasAlpha);
  assert.ok(image.width < 96 && image.height < 96, `${image.width}x${image.height}`);
  assert.is(r.headers.get('x-image-width'), String(image.width));
});

test('remove-background, url mode in webp', async () => {
  const input = disc(64, 64, 16, [20, 30, 220], [250, 250, 250], { alpha: false });
  const r = await post(server.url, '/images/remove-background', { input, format: 'webp' });
  assert.is(r.status, 200, r.body.toString());
  assert.match(r.json().url, /\.webp$/);
  const d = await get(r.json().url, '');
  assert.is(d.headers.get('content-type'), 'image/webp');
  assert.is(formatOf(d.body), 'webp');
});

test('remove-background: quality and anim are unknown fields, other formats invalid', async () => {
  assertError(await post(server.url, '/images/remove-background', { input: png, quality: '80' }), 400, 'unknown_field', 'quality');
  assertError(await post(server.url, '/images/remove-background', { input: png, anim: 'true' }), 400, 'unknown_field', 'anim');
  assertError(await post(server.url, '/images/remove-background', { input: png, operations: '[]' }), 400, 'unknown_field', 'operations');
  assertError(await post(server.url, '/images/remove-background', { input: png, format: 'gif' }), 400, 'invalid_field', 'format');
  assertError(await post(server.url, '/images/remove-background', { input: png, trim: 'maybe' }), 400, 'invalid_field', 'trim');
  assertError(await post(server.url, '/images/remove-background', {}), 400, 'input_missing', 'input');
});

// ---- failures of the server itself ---------------------------------------------------------------

test('a store that cannot be written (its directory removed): 503 store_unavailable, no path; /readyz 503', async () => {
  const dir = await tempDir('matte-broken-');
  const broken = await startTestServer({ MATTE_RESULTS_DIR: dir });
  try {
    await rm(dir, { recursive: true, force: true });
    const r = await post(broken.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
    assertError(r, 503, 'store_unavailable');
    assert.ok(r.headers.get('retry-after'));
    const body = r.body.toString();
    assert.not.ok(body.includes(dir), body);
    assert.not.ok(/\bat \w|\.js:\d/.test(body), body);
    const ready = await get(broken.url, '/readyz');
    assertError(ready, 503, 'not_ready');
    // raw output needs no store and still works
    assert.is((await post(broken.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' })).status, 200);
  } finally {
    await broken.close();
  }
});

test('no model: /readyz 503 (a warning in the log, not an error), background removal 503 model_error, other edits still work', async () => {
  const emptyModels = await tempDir('matte-nomodel-');
  const log = captureLog();
  const noModel = await startTestServer({ MATTE_MODELS_DIR: emptyModels }, { logger: log.logger });
  try {
    assertError(await get(noModel.url, '/readyz'), 503, 'not_ready');
    const probeLines = () => log.text().split('\n').filter((line) => line.includes('"code":"not_ready"'));
    await waitFor('the log lines of the readiness probe', () => probeLines().some((line) => line.includes('"msg":"request"')));
    // pino's levels: 30 info (the access line), 40 warn, 50 error.
    assert.equal(probeLines().map((line) => [JSON.parse(line).level, JSON.parse(line).msg]), [[40, 'not ready'], [30, 'request']]);
    const r = await post(noModel.url, '/images/remove-background', { input: png });
    assertError(r, 503, 'model_error');
    assert.not.ok(r.body.toString().includes(emptyModels));
    assertError(await post(noModel.url, '/images/edit', { input: png, operations: '[{"removeBackground":true}]' }), 503, 'model_error');
    assert.is((await post(noModel.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]', output: 'raw' })).status, 200);
  } finally {
    await noModel.close();
    await rm(emptyModels, { recursive: true, force: true });
  }
});

test.run();
