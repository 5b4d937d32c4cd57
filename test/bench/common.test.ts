// run-tests: parallel
// The bench's statistics helpers (fast; speed itself is never checked in tests).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { median, summarise } from '../../bench/common.js';
import { fromHalf, toHalf } from '../../bench/half.js';
import { PIPELINES, SMALL_EDIT } from '../../bench/pipelines.js';
import { parseOperations } from '../../lib/schema.js';

test('median and min of timed runs', () => {
  assert.is(median([5, 1, 3]), 3);
  assert.is(median([4, 1, 3, 2]), 2.5);
  const t = summarise([9, 7, 8]);
  assert.is(t.median, 8);
  assert.is(t.min, 7);
  assert.equal(t.runs, [9, 7, 8]);
});

test('every bench pipeline is a valid operation list', () => {
  assert.equal(PIPELINES.map((p) => p.id), ['P1', 'P2', 'P3', 'P4', 'P5']);
  for (const p of PIPELINES) parseOperations(p.operations);
  parseOperations(SMALL_EDIT.operations);
});

test('float16 conversion for float16 models', () => {
  assert.is(toHalf(1), 0x3c00);
  assert.is(toHalf(-2), 0xc000);
  assert.is(toHalf(65504), 0x7bff);
  assert.is(toHalf(1e6), 0x7c00);
  for (const v of [0, 0.5, -0.485, 2.2489, 1e-5, -3.75]) {
    assert.ok(Math.abs(fromHalf(toHalf(v)) - v) <= Math.max(Math.abs(v) * 1e-3, 6e-8), `${v}`);
  }
});

test.run();
