// run-tests: parallel
// User-caused errors through the real server are clear 4xx answers, never 500: overflowing resize
// geometry, malformed colours, tone factors beyond the addon's bound, wide sample layouts, limit
// variables beyond the addon's bounds, and (property) any random operation list.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { loadConfig, ConfigError } from '../../server/config.js';
import { LIMIT_BOUNDS } from '../../lib/index.js';
import { floatTiff, greyPng } from '../helpers/crafted.js';
import { gradient, solid } from '../helpers/images.js';
import { operationList } from '../helpers/random-operations.js';
import { post, startTestServer } from '../helpers/server.js';

const server = await startTestServer({ MATTE_MAX_INPUT_PIXELS: '1000000000000000' });
const small = await startTestServer({ MATTE_MAX_INPUT_PIXELS: '1000000', MATTE_CONCURRENCY: '2' });
const image = solid(8, 8, [10, 20, 30]);
const editRaw = (base: string, input: Buffer, operations: string) => post(base, '/images/edit', { input, operations, output: 'raw' });

test('1 x 4194305 PNG resized to width 1024: 400 invalid_operations at operations[0].resize', async () => {
  const r = await editRaw(server.url, greyPng(1, 4_194_305), '[{"resize":{"width":1024}}]');
  assert.is(r.status, 400, r.body.toString());
  assert.is(r.json().error.code, 'invalid_operations');
  assert.is(r.json().error.path, 'operations[0].resize');
});

test('{"background":"rgb(1x)"}: 400 with the path', async () => {
  const r = await editRaw(server.url, image, '[{"background":"rgb(1x)"}]');
  assert.is(r.status, 400, r.body.toString());
  assert.is(r.json().error.code, 'invalid_operations');
  assert.is(r.json().error.path, 'operations[0].background');
});

test('{"brightness":2e9} (and contrast, saturation): 400 with the path', async () => {
  for (const op of ['brightness', 'contrast', 'saturation']) {
    const r = await editRaw(server.url, image, `[{"${op}":2e9}]`);
    assert.is(r.status, 400, r.body.toString());
    assert.is(r.json().error.path, `operations[0].${op}`);
  }
});

test('3000x3000 TIFF with 16 float32 samples a pixel: 413 image_too_large (decoded bytes)', async () => {
  const r = await editRaw(small.url, floatTiff(3000, 3000, 16), '[{"flip":"h"}]');
  assert.is(r.status, 413, r.body.toString());
  assert.is(r.json().error.code, 'image_too_large');
});

test('MATTE_MAX_INPUT_PIXELS at the addon bound works; above it stops the start naming the variable', async () => {
  const r = await editRaw(server.url, image, '[{"flip":"h"}]');
  assert.is(r.status, 200, r.body.toString());
  for (const [name, key] of [
    ['MATTE_MAX_INPUT_PIXELS', 'maxPixels'],
    ['MATTE_MAX_ANIMATION_FRAMES', 'maxFrames'],
    ['MATTE_MAX_MATTE_FRAMES', 'maxMatteFrames'],
  ] as const) {
    const max = LIMIT_BOUNDS[key].max;
    assert.not.throws(() => loadConfig({ [name]: String(max) }));
    try {
      loadConfig({ [name]: String(max + 1) });
      assert.unreachable(`${name}=${max + 1} accepted`);
    } catch (err) {
      assert.instance(err, ConfigError);
      assert.match((err as Error).message, name);
    }
  }
});

test('random operation lists never get a 5xx (seeded, 80 runs, removeBackground included)', async () => {
  const input = gradient(24, 16);
  await fc.assert(
    fc.asyncProperty(operationList, async (operations) => {
      const r = await editRaw(small.url, input, JSON.stringify(operations));
      if (r.status >= 500) throw new Error(`${r.status} for ${JSON.stringify(operations)}: ${r.body}`);
    }),
    { seed: 20261123, numRuns: 80 },
  );
});

test.after(async () => {
  await server.close();
  await small.close();
});

test.run();
