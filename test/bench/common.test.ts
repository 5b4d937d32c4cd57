// The bench's statistics helpers (fast; speed itself is never checked in tests).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { median, summarise } from '../../bench/common.js';
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

test.run();
