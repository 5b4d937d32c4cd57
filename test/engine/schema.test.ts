// run-tests: parallel
// The operation schema: every rule of docs/api.md, "Operations (edit)", with the `path` a user
// sees. Pure validation: no image is touched.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseOperations, parseOperationsJson, parseBooleanField, parseQualityField, parseEnumField, MAX_OPERATIONS } from '../../lib/schema.js';
import { MatteError } from '../../lib/errors.js';

function rejects(ops: unknown, path: string, message?: RegExp, code = 'invalid_operations') {
  try {
    parseOperations(ops);
  } catch (err) {
    assert.instance(err, MatteError);
    const e = err as MatteError;
    assert.is(e.code, code);
    assert.is(e.path, path, `path of ${JSON.stringify(ops)}: ${e.message}`);
    if (message) assert.match(e.message, message);
    return;
  }
  assert.unreachable(`accepted ${JSON.stringify(ops)}`);
}

test('normalises every operation with its defaults', () => {
  const steps = parseOperations([
    { resize: { width: 100 } },
    { resize: { height: 50, fit: 'cover' } },
    { rotate: 270 },
    { flip: 'hv' },
    { blur: 2.5 },
    { brightness: 1.2 },
    { contrast: 0 },
    { saturation: 0.5 },
    { background: '#FF000080' },
    { removeBackground: true },
    { trim: true },
  ]);
  assert.equal(steps, [
    { op: 'resize', width: 100, height: undefined, fit: 'contain' },
    { op: 'resize', width: undefined, height: 50, fit: 'cover' },
    { op: 'rotate', angle: 270 },
    { op: 'flip', direction: 'hv' },
    { op: 'blur', radius: 2.5 },
    { op: 'brightness', value: 1.2 },
    { op: 'contrast', value: 0 },
    { op: 'saturation', value: 0.5 },
    { op: 'background', rgba: [255, 0, 0, 128] },
    { op: 'removeBackground' },
    { op: 'trim' },
  ]);
});

test('the list holds 1 to 20 operations', () => {
  rejects([], 'operations', /at least 1/);
  rejects(Array(MAX_OPERATIONS + 1).fill({ flip: 'h' }), 'operations', /at most 20/);
  assert.is(parseOperations(Array(MAX_OPERATIONS).fill({ flip: 'h' })).length, 20);
  rejects({ flip: 'h' }, 'operations', /array/);
  rejects(null, 'operations');
});

test('each entry has exactly one known key', () => {
  rejects([{}], 'operations[0]', /exactly one key/);
  rejects([{ flip: 'h', rotate: 90 }], 'operations[0]', /exactly one key/);
  rejects([{ flip: 'h' }, { watermark: 2 }], 'operations[1]', /unknown operation "watermark"/);
  rejects([{ flip: 'h' }, 'flip'], 'operations[1]');
  rejects([[{ flip: 'h' }]], 'operations[0]');
  rejects([{ __proto__: 1 }], 'operations[0]');
});

test('resize: width and/or height, integers 1..10000, known fit', () => {
  rejects([{ resize: {} }], 'operations[0].resize', /width and\/or height/);
  rejects([{ resize: { width: 0 } }], 'operations[0].resize.width', /at least 1/);
  rejects([{ resize: { width: 10001 } }], 'operations[0].resize.width', /at most 10000/);
  rejects([{ resize: { height: 10.5 } }], 'operations[0].resize.height', /integer/);
  rejects([{ resize: { width: '100' } }], 'operations[0].resize.width', /number/);
  rejects([{ resize: { width: 10, fit: 'stretch' } }], 'operations[0].resize.fit', /contain, cover, scale-down, crop, pad, fill/);
  rejects([{ resize: { width: 10, mode: 'x' } }], 'operations[0].resize');
  rejects([{ resize: 100 }], 'operations[0].resize');
  assert.is(parseOperations([{ resize: { width: 10000, height: 1, fit: 'crop' } }]).length, 1);
});

test('rotate and flip take only their listed values', () => {
  rejects([{ rotate: 45 }], 'operations[0].rotate', /90, 180 or 270/);
  rejects([{ rotate: '90' }], 'operations[0].rotate');
  rejects([{ rotate: -90 }], 'operations[0].rotate');
  rejects([{ flip: 'x' }], 'operations[0].flip', /h, v or hv/);
  rejects([{ flip: 'H' }], 'operations[0].flip');
});

test('blur 0..250 and tone factors >= 0, finite numbers only', () => {
  rejects([{ flip: 'h' }, { flip: 'v' }, { blur: 251 }], 'operations[2].blur', /^operations\[2\]\.blur must be at most 250$/);
  rejects([{ blur: -1 }], 'operations[0].blur', /at least 0/);
  rejects([{ blur: '5' }], 'operations[0].blur', /number/);
  rejects([{ brightness: -0.1 }], 'operations[0].brightness', /at least 0/);
  rejects([{ contrast: null }], 'operations[0].contrast');
  rejects([{ saturation: Infinity }], 'operations[0].saturation');
  rejects([{ saturation: NaN }], 'operations[0].saturation');
  assert.is(parseOperations([{ blur: 0 }, { blur: 250 }, { brightness: 0 }, { saturation: 100 }]).length, 4);
});

test('background takes the CSS colour forms of docs/api.md', () => {
  rejects([{ background: 'not-a-colour' }], 'operations[0].background', /CSS colour/);
  rejects([{ background: 'lab(50% 40 59)' }], 'operations[0].background');
  rejects([{ background: '#12345' }], 'operations[0].background');
  rejects([{ background: 0xff0000 }], 'operations[0].background');
});

test('removeBackground and trim take literal true; removeBackground at most once', () => {
  rejects([{ removeBackground: false }], 'operations[0].removeBackground', /must be true/);
  rejects([{ removeBackground: 'true' }], 'operations[0].removeBackground');
  rejects([{ trim: 1 }], 'operations[0].trim');
  rejects([{ removeBackground: true }, { trim: true }, { removeBackground: true }], 'operations[2].removeBackground', /only once/);
});

test('the operations form field is JSON', () => {
  assert.is(parseOperationsJson('[{"flip":"h"}]').length, 1);
  try {
    parseOperationsJson('[{"flip":');
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).code, 'invalid_json');
    assert.is((err as MatteError).path, 'operations');
  }
  try {
    parseOperationsJson('[{"blur": 1e999}]'); // JSON's 1e999 is Infinity
    assert.unreachable();
  } catch (err) {
    assert.is((err as MatteError).path, 'operations[0].blur');
  }
});

test('form values: booleans, quality, enums', () => {
  for (const t of ['true', 'TRUE', '1', ' True ']) assert.is(parseBooleanField('anim', t), true);
  for (const f of ['false', 'False', '0']) assert.is(parseBooleanField('trim', f), false);
  for (const bad of ['yes', '', '2', 'truee']) assert.throws(() => parseBooleanField('anim', bad), (e: MatteError) => e.code === 'invalid_field' && e.path === 'anim');
  assert.is(parseQualityField('1'), 1);
  assert.is(parseQualityField('100'), 100);
  for (const bad of ['0', '101', '50.5', '5e1', 'abc', '', '-3']) assert.throws(() => parseQualityField(bad), (e: MatteError) => e.code === 'invalid_field' && e.path === 'quality');
  assert.is(parseEnumField('format', ['png', 'webp'], 'WEBP'), 'webp');
  assert.throws(() => parseEnumField('format', ['png', 'webp'], 'jpeg'), /png, webp/);
});

test.run();
