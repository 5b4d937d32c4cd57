// run-tests: parallel
// The responsive-image extensions' schema (docs/api.md, "Extensions: responsive images"): resize's
// gravity, enlarge, background and dpr, and sharpen, gamma, extend and crop, with the `path` a
// user sees. Pure validation: no image is touched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseOperations } from '../../lib/schema.js';
import { MatteError } from '../../lib/errors.js';

function rejects(ops: unknown, path: string, message?: RegExp) {
  try {
    parseOperations(ops);
  } catch (err) {
    assert.instance(err, MatteError);
    const e = err as MatteError;
    assert.is(e.code, 'invalid_operations');
    assert.is(e.path, path, `path of ${JSON.stringify(ops)}: ${e.message}`);
    if (message) assert.match(e.message, message);
    return;
  }
  assert.unreachable(`accepted ${JSON.stringify(ops)}`);
}

const step = (op: unknown) => parseOperations([op])[0];

test('a plain resize keeps the step it had: defaults are left out', () => {
  assert.equal(step({ resize: { width: 100, height: 50, fit: 'cover', gravity: 'centre', enlarge: true, dpr: 1 } }), { op: 'resize', width: 100, height: 50, fit: 'cover' });
  assert.equal(step({ resize: { width: 100, fit: 'crop', gravity: 'center', enlarge: false } }), { op: 'resize', width: 100, height: undefined, fit: 'crop' });
  assert.equal(step({ resize: { width: 100, fit: 'scale-down', enlarge: false } }), { op: 'resize', width: 100, height: undefined, fit: 'scale-down' });
});

test('resize: every gravity, as its step holds it', () => {
  for (const g of ['north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest', 'subject', 'attention'] as const) {
    assert.equal(step({ resize: { width: 10, height: 10, fit: 'cover', gravity: g } }), { op: 'resize', width: 10, height: 10, fit: 'cover', gravity: g });
  }
  assert.equal(step({ resize: { width: 10, height: 10, fit: 'crop', gravity: { x: 0.25, y: 1 } } }), { op: 'resize', width: 10, height: 10, fit: 'crop', gravity: 'focus', focus: [0.25, 1] });
  assert.equal(step({ resize: { width: 10, height: 10, fit: 'pad', gravity: { x: 0, y: 0 } } }), { op: 'resize', width: 10, height: 10, fit: 'pad', gravity: 'focus', focus: [0, 0] });
  // Fits that keep the whole image have no window to place: the gravity is accepted and has no effect.
  for (const fit of ['contain', 'scale-down', 'fill'] as const) {
    assert.equal(step({ resize: { width: 10, height: 10, fit, gravity: 'subject' } }), { op: 'resize', width: 10, height: 10, fit });
  }
});

test('resize: a bad gravity is refused at its path', () => {
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: 'top' } }], 'operations[0].resize.gravity', /must be one of centre, center, north, .*subject, attention, or a focal point/);
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: 'Centre' } }], 'operations[0].resize.gravity');
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: 5 } }], 'operations[0].resize.gravity');
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 1.01, y: 0.5 } } }], 'operations[0].resize.gravity.x', /at most 1/);
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 0.5, y: -0.1 } } }], 'operations[0].resize.gravity.y', /at least 0/);
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 0.5 } } }], 'operations[0].resize.gravity', /focal point \{"x": 0..1, "y": 0..1\}/);
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: 0.5, y: 0.5, z: 1 } } }], 'operations[0].resize.gravity');
  rejects([{ resize: { width: 10, height: 10, fit: 'cover', gravity: { x: NaN, y: 0.5 } } }], 'operations[0].resize.gravity');
  // pad places the image: a compass point or a focal point, not a window chooser.
  rejects([{ resize: { width: 10, height: 10, fit: 'pad', gravity: 'subject' } }], 'operations[0].resize.gravity', /with fit pad/);
  rejects([{ resize: { width: 10, height: 10, fit: 'pad', gravity: 'attention' } }], 'operations[0].resize.gravity', /with fit pad/);
});

test('resize: pad needs its box, background is pad\'s', () => {
  rejects([{ resize: { width: 10, fit: 'pad' } }], 'operations[0].resize.fit', /pad needs both width and height/);
  rejects([{ resize: { height: 10, fit: 'pad', background: 'red' } }], 'operations[0].resize.fit', /pad needs both/);
  rejects([{ resize: { width: 10, height: 10, background: 'red' } }], 'operations[0].resize.background', /fit pad/);
  rejects([{ resize: { width: 10, height: 10, fit: 'pad', background: 'notacolour' } }], 'operations[0].resize.background', /CSS colour/);
  assert.equal(step({ resize: { width: 10, height: 20, fit: 'pad', background: '#ff000080' } }), { op: 'resize', width: 10, height: 20, fit: 'pad', rgba: [255, 0, 0, 128] });
  assert.equal(step({ resize: { width: 10, height: 20, fit: 'pad' } }), { op: 'resize', width: 10, height: 20, fit: 'pad' });
  assert.equal(step({ resize: { width: 10, fit: 'fill' } }), { op: 'resize', width: 10, height: undefined, fit: 'fill' });
  // A missing size is said before the rules between fields.
  rejects([{ resize: { fit: 'pad' } }], 'operations[0].resize', /width and\/or height/);
});

test('resize: enlarge is kept only where it differs from the fit\'s default', () => {
  assert.equal(step({ resize: { width: 10, enlarge: false } }), { op: 'resize', width: 10, height: undefined, fit: 'contain', enlarge: false });
  assert.equal(step({ resize: { width: 10, fit: 'crop', enlarge: true } }), { op: 'resize', width: 10, height: undefined, fit: 'crop', enlarge: true });
  assert.equal(step({ resize: { width: 10, height: 10, fit: 'pad', enlarge: false } }), { op: 'resize', width: 10, height: 10, fit: 'pad', enlarge: false });
  assert.equal(step({ resize: { width: 10, height: 10, fit: 'fill', enlarge: true } }), { op: 'resize', width: 10, height: 10, fit: 'fill' });
  rejects([{ resize: { width: 10, enlarge: 'yes' } }], 'operations[0].resize.enlarge', /true or false/);
});

test('resize: dpr 1..4, fractions allowed', () => {
  assert.equal(step({ resize: { width: 10, dpr: 2.5 } }), { op: 'resize', width: 10, height: undefined, fit: 'contain', dpr: 2.5 });
  assert.equal(step({ resize: { width: 10, dpr: 4 } }), { op: 'resize', width: 10, height: undefined, fit: 'contain', dpr: 4 });
  rejects([{ resize: { width: 10, dpr: 0 } }], 'operations[0].resize.dpr', /at least 1/);
  rejects([{ resize: { width: 10, dpr: 5 } }], 'operations[0].resize.dpr', /at most 4/);
  rejects([{ resize: { width: 10, dpr: 0.5 } }], 'operations[0].resize.dpr', /at least 1/);
  rejects([{ resize: { width: 10, dpr: '2' } }], 'operations[0].resize.dpr', /number/);
  rejects([{ resize: { width: 10, dpr: Infinity } }], 'operations[0].resize.dpr', /number/);
  rejects([{ resize: { width: 10, scale: 2 } }], 'operations[0].resize');
});

test('sharpen: one number 0..10, or sigma with flat and jagged', () => {
  assert.equal(step({ sharpen: 1 }), { op: 'sharpen', sigma: 1, flat: 0, jagged: 3 });
  assert.equal(step({ sharpen: 0 }), { op: 'sharpen', sigma: 0, flat: 0, jagged: 3 });
  assert.equal(step({ sharpen: { sigma: 0.5, flat: 1, jagged: 2 } }), { op: 'sharpen', sigma: 0.5, flat: 1, jagged: 2 });
  assert.equal(step({ sharpen: { sigma: 2 } }), { op: 'sharpen', sigma: 2, flat: 0, jagged: 3 });
  rejects([{ sharpen: 10.5 }], 'operations[0].sharpen', /at most 10/);
  rejects([{ sharpen: -1 }], 'operations[0].sharpen', /at least 0/);
  rejects([{ sharpen: true }], 'operations[0].sharpen', /must be a number 0..10 or \{"sigma"/);
  rejects([{ sharpen: { sigma: 11 } }], 'operations[0].sharpen.sigma', /at most 10/);
  rejects([{ sharpen: { sigma: 1, flat: 101 } }], 'operations[0].sharpen.flat', /at most 100/);
  rejects([{ sharpen: { sigma: 1, jagged: -1 } }], 'operations[0].sharpen.jagged', /at least 0/);
  rejects([{ sharpen: { flat: 1 } }], 'operations[0].sharpen', /\{"sigma": 0..10/);
  rejects([{ sharpen: { sigma: 1, m1: 1 } }], 'operations[0].sharpen');
});

test('gamma: 0.1..10', () => {
  assert.equal(step({ gamma: 2.2 }), { op: 'gamma', value: 2.2 });
  assert.equal(step({ gamma: 0.1 }), { op: 'gamma', value: 0.1 });
  rejects([{ gamma: 0 }], 'operations[0].gamma', /at least 0.1/);
  rejects([{ gamma: 10.01 }], 'operations[0].gamma', /at most 10/);
  rejects([{ gamma: '2' }], 'operations[0].gamma', /number/);
});

test('extend: pixels a side 0..10000, at least one side, a background colour', () => {
  assert.equal(step({ extend: { top: 5 } }), { op: 'extend', sides: [5, 0, 0, 0], rgba: [0, 0, 0, 0] });
  assert.equal(step({ extend: { left: 1, right: 2, bottom: 3, background: 'white' } }), { op: 'extend', sides: [0, 2, 3, 1], rgba: [255, 255, 255, 255] });
  rejects([{ extend: {} }], 'operations[0].extend', /needs top, right, bottom and\/or left/);
  rejects([{ extend: { background: 'red' } }], 'operations[0].extend', /needs top/);
  rejects([{ extend: { top: 10001 } }], 'operations[0].extend.top', /at most 10000/);
  rejects([{ extend: { left: 1.5 } }], 'operations[0].extend.left', /integer/);
  rejects([{ extend: { left: -1 } }], 'operations[0].extend.left', /at least 0/);
  rejects([{ extend: { left: 1, background: 'nope' } }], 'operations[0].extend.background', /CSS colour/);
  rejects([{ extend: 10 }], 'operations[0].extend', /must be an object/);
  rejects([{ extend: { all: 1 } }], 'operations[0].extend');
});

test('crop: pixels a side 0..10000, at least one side', () => {
  assert.equal(step({ crop: { top: 1, right: 2, bottom: 3, left: 4 } }), { op: 'crop', sides: [1, 2, 3, 4] });
  assert.equal(step({ crop: { bottom: 7 } }), { op: 'crop', sides: [0, 0, 7, 0] });
  rejects([{ crop: {} }], 'operations[0].crop', /needs top/);
  rejects([{ crop: { top: 10001 } }], 'operations[0].crop.top', /at most 10000/);
  rejects([{ crop: { top: 1, background: 'red' } }], 'operations[0].crop');
  rejects([{ crop: [1, 2, 3, 4] }], 'operations[0].crop', /must be an object/);
});

test.run();
