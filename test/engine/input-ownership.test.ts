// run-tests: parallel
// The library never reads the caller's memory during a job: the input is copied when edit() is
// called, so a caller that reuses, overwrites or transfers its buffer right after the call still
// gets the picture it passed (README, "Library").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, removeBackground } from '../../lib/index.js';
import { decode, pixel, solid } from '../helpers/images.js';

const red = solid(16, 16, [255, 0, 0]);

test('a Buffer overwritten right after edit() is called: the job still sees the original', async () => {
  const input = Buffer.from(red);
  const job = edit(input, [{ flip: 'h' }]);
  input.fill(0);
  const out = await job;
  assert.is(out.width, 16);
  assert.equal(pixel(await decode(out.data), 3, 3).slice(0, 3), [255, 0, 0]);
});

test('a Uint8Array view overwritten right after the call', async () => {
  const backing = new ArrayBuffer(red.length + 8);
  const view = new Uint8Array(backing, 4, red.length);
  view.set(red);
  const job = edit(view, [{ rotate: 90 }]);
  view.fill(7);
  const out = await job;
  assert.equal(pixel(await decode(out.data), 0, 0).slice(0, 3), [255, 0, 0]);
});

test('an ArrayBuffer transferred (detached) right after the call', async () => {
  const view = new Uint8Array(red.length);
  view.set(red);
  const job = edit(view, [{ resize: { width: 8 } }]);
  const moved = structuredClone(view.buffer, { transfer: [view.buffer] });
  assert.is(view.byteLength, 0); // detached
  new Uint8Array(moved).fill(0);
  const out = await job;
  assert.is(out.width, 8);
  assert.equal(pixel(await decode(out.data), 4, 4).slice(0, 3), [255, 0, 0]);
});

test('copies are reused only once their job has settled: jobs of the same size at once, and one after another, each read their own', async () => {
  const colours: Array<[number, number, number]> = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0], [0, 255, 255], [255, 0, 255], [128, 128, 128]];
  const inputs = colours.map((c) => Buffer.from(solid(16, 16, c)));
  const controller = new AbortController();
  // One job stopped before it could start, among the others: its copy must not be handed on early.
  const stopped = edit(inputs[0]!, [{ blur: 3 }], { signal: controller.signal }).catch((err: { code?: string }) => err.code);
  controller.abort();
  const jobs = inputs.map((input) => edit(input, [{ flip: 'h' }]));
  for (const input of inputs) input.fill(0);
  const outs = await Promise.all(jobs);
  assert.is(await stopped, 'aborted');
  for (const [i, out] of outs.entries()) assert.equal(pixel(await decode(out.data), 5, 5).slice(0, 3), colours[i], `job ${i}`);
  for (const [i, colour] of colours.entries()) {
    const out = await edit(Buffer.from(solid(16, 16, colour)), [{ rotate: 180 }]);
    assert.equal(pixel(await decode(out.data), 5, 5).slice(0, 3), colour, `after: job ${i}`);
  }
});

test('removeBackground also copies (the buffer is overwritten while the model may be loading)', async () => {
  const input = Buffer.from(solid(16, 16, [255, 0, 0, 128] as any, { alpha: true }));
  const job = removeBackground(input); // already transparent: skipped, no inference
  input.fill(0);
  const out = await job;
  assert.is(out.width, 16);
});

test('a handed-over Buffer (the server\'s upload) is read in place: no copy', async () => {
  // Overwritten right after the call, before the job reads it: the job sees the zeros, which
  // shows that it was not copied (handOver's contract forbids exactly this; the test breaks it).
  const input = Buffer.from(red);
  const job = edit(input, [{ flip: 'h' }], { handOver: true });
  input.fill(0);
  const err = await job.then(() => undefined, (e: { code?: string }) => e);
  assert.is(err?.code, 'unsupported_image');
  // Left alone, it gives the picture.
  const out = await edit(Buffer.from(red), [{ flip: 'h' }], { handOver: true });
  assert.equal(pixel(await decode(out.data), 3, 3).slice(0, 3), [255, 0, 0]);
});

test.run();
