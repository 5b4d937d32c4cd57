// run-tests: parallel
// Models per request over real HTTP: MATTE_MODELS loads several (a custom one from
// MATTE_MODELS_FILE beside u2netp), /readyz lists them, the `model` field picks one, any other name
// is 400 invalid_field; `refine` in both endpoints; trim crops to the visible subject.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../server/config.js';
import { brightnessModelEnv } from '../helpers/onnx.js';
import { decode, makePng, pixel, solid } from '../helpers/images.js';
import { get, post, startTestServer, tempDir, type Fields, type Reply, type TestServer } from '../helpers/server.js';

let server: TestServer;
let scratch = '';
const RED: [number, number, number] = [200, 30, 30];
const WHITE: [number, number, number] = [255, 255, 255];

function assertError(reply: Reply, status: number, code: string, path: string): any {
  assert.is(reply.status, status, reply.body.toString());
  const body = reply.json();
  assert.is(body.error.code, code, reply.body.toString());
  assert.is(body.error.path, path);
  return body;
}

test.before(async () => {
  scratch = await tempDir('matte-models-file-');
  const { env } = await brightnessModelEnv(scratch, 16);
  server = await startTestServer({ ...env, MATTE_MODELS: 'u2netp,mean' });
});
test.after(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});

test('/readyz lists the loaded models, the default first', async () => {
  const r = await get(server.url, '/readyz');
  assert.is(r.status, 200, r.body.toString());
  assert.equal(r.json().models, ['u2netp', 'mean']);
  assert.is(r.json().model, 'u2netp');
});

test('the model field picks a loaded model, in both endpoints', async () => {
  const input = solid(16, 16, [200, 100, 30], { alpha: false });
  const rb = await post(server.url, '/images/remove-background', { input, model: 'mean', refine: 'false', output: 'raw' });
  assert.is(rb.status, 200, rb.body.toString());
  assert.is(pixel(await decode(rb.body), 3, 3)[3], 110);
  const ed = await post(server.url, '/images/edit', { input, operations: '[{"removeBackground": true}]', model: 'mean', refine: 'false', output: 'raw' });
  assert.is(ed.status, 200, ed.body.toString());
  assert.is(pixel(await decode(ed.body), 3, 3)[3], 110);
  // The operation's own settings win over the form fields.
  const op = await post(server.url, '/images/edit', {
    input,
    operations: '[{"removeBackground": {"model": "mean", "refine": false}}]',
    model: 'u2netp',
    output: 'raw',
  });
  assert.is(op.status, 200, op.body.toString());
  assert.is(pixel(await decode(op.body), 3, 3)[3], 110);
});

test('any other model name: 400 invalid_field, path model, listing the loaded ones', async () => {
  const input = solid(16, 16, [1, 2, 3], { alpha: false });
  for (const endpoint of ['/images/remove-background', '/images/edit']) {
    const fields: Fields = endpoint === '/images/edit' ? { input, operations: '[{"removeBackground": true}]' } : { input };
    const body = assertError(await post(server.url, endpoint, { ...fields, model: 'isnet' }), 400, 'invalid_field', 'model');
    assert.match(body.error.message, /u2netp, mean/);
    assertError(await post(server.url, endpoint, { ...fields, model: '../x' }), 400, 'invalid_field', 'model');
    assertError(await post(server.url, endpoint, { ...fields, refine: 'maybe' }), 400, 'invalid_field', 'refine');
  }
  const op = await post(server.url, '/images/edit', { input, operations: '[{"removeBackground": {"model": "isnet"}}]' });
  assertError(op, 400, 'invalid_operations', 'operations[0].removeBackground.model');
  const bad = await post(server.url, '/images/edit', { input, operations: '[{"removeBackground": {"refine": "no"}}]' });
  assertError(bad, 400, 'invalid_operations', 'operations[0].removeBackground');
});

test('trim on a 480x480 white image with one 100x100 subject in a corner: about 100 px wide', async () => {
  const input = makePng(480, 480, (x, y) => (x >= 20 && x < 120 && y >= 20 && y < 120 ? RED : WHITE), { alpha: false });
  const r = await post(server.url, '/images/remove-background', { input, trim: 'true', output: 'raw' });
  assert.is(r.status, 200, r.body.toString());
  const width = Number(r.headers.get('x-image-width'));
  const height = Number(r.headers.get('x-image-height'));
  assert.ok(width >= 95 && width <= 112, `width ${width}`);
  assert.ok(height >= 95 && height <= 112, `height ${height}`);
  // refine=false: the model alone, haze included (the box is most of the canvas).
  const plain = await post(server.url, '/images/remove-background', { input, trim: 'true', refine: 'false', output: 'raw' });
  assert.ok(Number(plain.headers.get('x-image-width')) > 300);
});

test('config: MATTE_MODELS, MATTE_MODEL as its synonym, and the errors naming the variable', () => {
  const base = { MATTE_API_KEYS: 'k' };
  assert.equal(loadConfig({ ...base, MATTE_MODELS: 'u2netp, isnet' }).models, ['u2netp', 'isnet']);
  assert.equal(loadConfig({ ...base, MATTE_MODEL: 'isnet' }).models, ['isnet']);
  assert.is(loadConfig(base).models, undefined);
  assert.throws(() => loadConfig({ ...base, MATTE_MODELS: 'u2netp', MATTE_MODEL: 'isnet' }), (e: Error) => e instanceof ConfigError && /MATTE_MODELS or MATTE_MODEL/.test(e.message));
  assert.throws(() => loadConfig({ ...base, MATTE_MODELS: 'u2netp,,isnet' }), (e: Error) => e instanceof ConfigError && /MATTE_MODELS/.test(e.message));
  assert.throws(() => loadConfig({ ...base, MATTE_MODELS: 'u2netp,u2netp' }), (e: Error) => /twice/.test(e.message));
  assert.throws(() => loadConfig({ ...base, MATTE_MODELS_FILE: join(scratch, 'missing.json') }), (e: Error) => e instanceof ConfigError && /MATTE_MODELS_FILE/.test(e.message));
});

test.run();
