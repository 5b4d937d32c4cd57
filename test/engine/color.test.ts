// run-tests: parallel
// CSS colour parsing: every form docs/api.md lists, plus #RGBA, case-insensitive.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseColor } from '../../lib/color.js';

const cases: Array<[string, [number, number, number, number]]> = [
  ['#f00', [255, 0, 0, 255]],
  ['#F008', [255, 0, 0, 136]],
  ['#00ff00', [0, 255, 0, 255]],
  ['#0000FF80', [0, 0, 255, 128]],
  ['rgb(10, 20, 30)', [10, 20, 30, 255]],
  ['rgb(10 20 30 / 50%)', [10, 20, 30, 128]],
  ['RGBA(10,20,30,0.25)', [10, 20, 30, 64]],
  ['hsl(120, 100%, 50%)', [0, 255, 0, 255]],
  ['hsla(240deg 100% 50% / 0.5)', [0, 0, 255, 128]],
  ['hwb(0 0% 0%)', [255, 0, 0, 255]],
  ['hwb(120 10% 20%)', [26, 204, 26, 255]],
  ['red', [255, 0, 0, 255]],
  ['RebeccaPurple', [102, 51, 153, 255]],
  ['transparent', [0, 0, 0, 0]],
  [' white ', [255, 255, 255, 255]],
];

for (const [text, rgba] of cases) {
  test(`parses ${text}`, () => assert.equal(parseColor(text), rgba));
}

test('refuses what is not a listed CSS colour form', () => {
  for (const bad of ['', 'nope', '#12', '#12345', '#1234567', 'rgb(1,2)', 'lab(50% 40 59)', 'color(display-p3 1 0 0)', 'url(x)', '12,34,56'])
    assert.is(parseColor(bad), undefined, bad);
});

test.run();
