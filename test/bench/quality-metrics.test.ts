// run-tests: parallel
// bench/quality's scores on small hand-checked mattes: IoU at 0.5, MAE, and the edge band.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edgeBand, score } from '../../bench/quality/metrics.js';
import { compositeName, splitOf } from '../../bench/quality/recipe.js';

// 8x1: truth is 0 0 0 0 255 255 255 255 (edge between x = 3 and x = 4).
const truth = Uint8Array.from([0, 0, 0, 0, 255, 255, 255, 255]);

test('the edge band: within the radius of the 0.5 contour, plus partial truth', () => {
  assert.equal([...edgeBand(truth, 8, 1, 1)], [0, 0, 1, 1, 1, 0, 0, 0]);
  assert.equal([...edgeBand(truth, 8, 1, 2)], [0, 1, 1, 1, 1, 1, 0, 0]);
  const soft = Uint8Array.from([0, 0, 0, 0, 255, 255, 128, 255]);
  assert.equal([...edgeBand(soft, 8, 1, 0)], [0, 0, 0, 1, 0, 0, 1, 0]);
  // In two dimensions the band is a square neighbourhood.
  const square = new Uint8Array(25);
  square[12] = 255; // one opaque pixel in the middle of 5x5
  const band = edgeBand(square, 5, 5, 1);
  // The contour is marked on the pixel left of / above each change: (1,2), (2,2), (2,1); their 3x3
  // neighbourhoods cover 3 + 4 + 4 + 4 pixels (rows 0..3).
  assert.is(band.reduce((a, b) => a + b, 0), 15);
});

test('scores: a perfect matte, a shifted edge, an empty prediction', () => {
  const band = edgeBand(truth, 8, 1, 1);
  assert.equal(score(truth, truth, band), { iou: 1, mae: 0, edgeMae: 0 });
  const shifted = Uint8Array.from([0, 0, 0, 255, 255, 255, 255, 255]);
  const s = score(shifted, truth, band);
  assert.is(s.iou, 4 / 5);
  assert.is(s.mae, 255 / 8);
  assert.is(s.edgeMae, 255 / 3);
  assert.is(score(new Uint8Array(8), truth, band).iou, 0);
});

test('composite names and the held-out split', () => {
  assert.is(compositeName(7, 'animals/mammals/cats/tiger.png'), '07-tiger');
  assert.is(splitOf(0), 'tune');
  assert.is(splitOf(1), 'report');
});

test.run();
