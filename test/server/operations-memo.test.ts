// run-tests: parallel
// The edit route's `operations` memo (server/operations-memo.ts): the same steps as
// parseOperationsJson for every text, a copy of its own for every call (the route fills in refine
// and model), the same error for an invalid text every time, and a bounded number of texts kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MatteError, parseOperationsJson } from '../../lib/index.js';
import { MEMO_MAX_ENTRIES, MEMO_MAX_TEXT, memoSize, parseOperationsMemo } from '../../server/operations-memo.js';

const TEXTS = [
  '[{"resize":{"width":320,"height":240,"fit":"cover"}}]',
  '[{"resize":{"width":32}},{"rotate":90},{"flip":"hv"},{"blur":2.5},{"brightness":1.2},{"contrast":0.8},{"saturation":0}]',
  '[{"background":"#00FF0080"},{"trim":true}]',
  '[{"removeBackground":true}]',
  '[{"removeBackground":{"refine":false,"model":"u2netp","tta":true}}]',
];

test('the same steps as parseOperationsJson, first call and later ones', () => {
  for (const text of TEXTS) {
    const expected = parseOperationsJson(text);
    for (let i = 0; i < 3; i++) {
      const steps = parseOperationsMemo(text);
      assert.equal(steps, expected, text);
      assert.equal(JSON.stringify(steps), JSON.stringify(expected), 'keys in the same order');
      // resize without a height keeps its undefined key, as parseOperationsJson gives it
      assert.equal(steps.map((s) => Object.keys(s)), expected.map((s) => Object.keys(s)));
    }
  }
});

test('every call gets its own steps: a change made by one request is not seen by the next', () => {
  const text = '[{"removeBackground":true},{"background":"#112233"}]';
  const first = parseOperationsMemo(text);
  const matting = first[0] as { op: 'removeBackground'; refine?: boolean; model?: string };
  matting.refine = false;
  matting.model = 'isnet';
  (first[1] as { rgba: number[] }).rgba[0] = 255;
  first.push({ op: 'trim' });
  const second = parseOperationsMemo(text);
  assert.equal(second, parseOperationsJson(text));
  assert.is.not(second, first);
  assert.is.not(second[0], first[0]);
  assert.is.not((second[1] as { rgba: number[] }).rgba, (first[1] as { rgba: number[] }).rgba);
});

test('an invalid text throws the same error every time and is not kept', () => {
  const before = memoSize();
  for (const text of ['[{"resize":{"width":-1}}]', 'not json', '[]', '[{"removeBackground":true},{"removeBackground":true}]']) {
    let expected: MatteError | undefined;
    try {
      parseOperationsJson(text);
    } catch (err) {
      expected = err as MatteError;
    }
    assert.ok(expected instanceof MatteError, text);
    for (let i = 0; i < 2; i++) {
      try {
        parseOperationsMemo(text);
        assert.unreachable(text);
      } catch (err) {
        assert.instance(err, MatteError);
        assert.is((err as MatteError).code, expected!.code);
        assert.is((err as MatteError).message, expected!.message);
        assert.is((err as MatteError).path, expected!.path);
      }
    }
  }
  assert.is(memoSize(), before);
});

test('bounded: long texts are not kept, and at most MEMO_MAX_ENTRIES texts are', () => {
  const long = JSON.stringify([{ resize: { width: 10 } }]).replace('[', `[${' '.repeat(MEMO_MAX_TEXT)}`);
  const before = memoSize();
  assert.equal(parseOperationsMemo(long), parseOperationsJson(long));
  assert.is(memoSize(), before);
  for (let width = 1; width <= MEMO_MAX_ENTRIES + 50; width++) {
    const text = `[{"resize":{"width":${width}}}]`;
    assert.is((parseOperationsMemo(text)[0] as { width?: number }).width, width);
  }
  assert.is(memoSize(), MEMO_MAX_ENTRIES);
  // the oldest went first; a dropped text is parsed again, correctly
  assert.equal(parseOperationsMemo(TEXTS[0]!), parseOperationsJson(TEXTS[0]!));
});

test.run();
