// run-tests: parallel
// Texts that make a parser backtrack, through the real server: the 65,000-digit rgb() background
// that used to hold the event loop for seconds, a Range header of spaces, and (property) every
// text field of both image endpoints fed adversarial texts up to its limit. Each is answered as
// a user error with its path, and /healthz is answered while they are in flight.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { MAX_FIELD_BYTES } from '../../server/input/form.js';
import { adversarialTexts } from '../helpers/adversarial-text.js';
import { gradient } from '../helpers/images.js';
import { get, post, startTestServer, type Fields } from '../helpers/server.js';

// No DNS answers here: should a text ever parse as a URL with a host name, nothing leaves loopback.
const server = await startTestServer({ MATTE_DNS_SERVERS: '127.0.0.1:9', MATTE_URL_FETCH_TIMEOUT_SECONDS: '1' });
const png = gradient(16, 16);

test('65,000-digit rgb(111...1) background: 400 at operations[0].background; /healthz answered meanwhile', async () => {
  const operations = JSON.stringify([{ background: `rgb(${'1'.repeat(65_000)})` }]);
  assert.ok(operations.length < MAX_FIELD_BYTES);
  const attacks = Array.from({ length: 4 }, () => post(server.url, '/images/edit', { input: png, operations, output: 'raw' }));
  const health = await get(server.url, '/healthz');
  assert.is(health.status, 200);
  for (const r of await Promise.all(attacks)) {
    assert.is(r.status, 400, r.body.toString());
    assert.is(r.json().error.code, 'invalid_operations');
    assert.is(r.json().error.path, 'operations[0].background');
  }
});

test('a colour of 65 characters is refused; every accepted form fits in 64', async () => {
  const long = `rgb(${'0'.repeat(60)}1)`;
  const r = await post(server.url, '/images/edit', { input: png, operations: JSON.stringify([{ background: long }]), output: 'raw' });
  assert.is(r.status, 400);
  assert.is(r.json().error.path, 'operations[0].background');
  assert.match(r.json().error.message, /64 characters/);
  const ok = await post(server.url, '/images/edit', { input: png, operations: JSON.stringify([{ background: 'hsla(359.99999deg 99.99999% 99.99999% / 0.9999999)' }]), output: 'raw' });
  assert.is(ok.status, 200, ok.body.toString());
});

test('Range header of 16,000 spaces on a stored result: answered whole, not parsed', async () => {
  const stored = await post(server.url, '/images/edit', { input: png, operations: '[{"flip":"h"}]' });
  assert.is(stored.status, 200);
  const url = stored.json().url as string;
  const r = await get(url, '', { headers: { Range: `bytes=-${' '.repeat(16_000)}x` } });
  assert.is(r.status, 200);
  const ranged = await get(url, '', { headers: { Range: 'bytes = 0 - 9' } });
  assert.is(ranged.status, 206);
  assert.is(ranged.body.length, 10);
});

/** Each text field of each endpoint, and the path its refusal names. */
const editFields: Array<[string, (t: string) => Record<string, string>, string]> = [
  ['operations', (t) => ({ operations: t }), 'operations'],
  ['background', (t) => ({ operations: JSON.stringify([{ background: t }]) }), 'operations[0].background'],
  ['removeBackground.model', (t) => ({ operations: JSON.stringify([{ removeBackground: { model: t } }]) }), 'operations[0].removeBackground.model'],
  ['resize.fit', (t) => ({ operations: JSON.stringify([{ resize: { width: 4, fit: t } }]) }), 'operations[0].resize.fit'],
  ['flip', (t) => ({ operations: JSON.stringify([{ flip: t }]) }), 'operations[0].flip'],
  ['output', (t) => ({ operations: '[{"flip":"h"}]', output: t }), 'output'],
  ['format', (t) => ({ operations: '[{"flip":"h"}]', format: t }), 'format'],
  ['quality', (t) => ({ operations: '[{"flip":"h"}]', quality: t }), 'quality'],
  ['anim', (t) => ({ operations: '[{"flip":"h"}]', anim: t }), 'anim'],
  ['refine', (t) => ({ operations: '[{"flip":"h"}]', refine: t }), 'refine'],
  ['model', (t) => ({ operations: '[{"flip":"h"}]', model: t }), 'model'],
  ['input (as a URL)', (t) => ({ operations: '[{"flip":"h"}]', input: t }), 'input'],
];
const removeFields: Array<[string, (t: string) => Record<string, string>, string]> = [
  ['output', (t) => ({ output: t }), 'output'],
  ['format', (t) => ({ format: t }), 'format'],
  ['trim', (t) => ({ trim: t }), 'trim'],
  ['refine', (t) => ({ refine: t }), 'refine'],
  ['model', (t) => ({ model: t }), 'model'],
  ['input (as a URL)', (t) => ({ input: t }), 'input'],
];

for (const [endpoint, fields] of [['/images/edit', editFields], ['/images/remove-background', removeFields]] as const) {
  for (const [name, build, path] of fields) {
    test(`${endpoint} ${name}: adversarial texts up to the field limit are 400 at ${path} (seeded, 12 runs)`, async () => {
      // Nested in the operations JSON, a text gets what the JSON leaves of the field's limit.
      const limit = path.startsWith('operations[') ? MAX_FIELD_BYTES - 200 : MAX_FIELD_BYTES;
      await fc.assert(
        fc.asyncProperty(adversarialTexts(limit), async (text) => {
          // The upload is given unless the text is the input itself, so only the field under test is wrong.
          const fields: Fields = { input: png, output: 'raw', ...build(text) };
          const r = await post(server.url, endpoint, fields);
          assert.is(r.status, 400, `${text.slice(0, 40)}... (${text.length}): ${r.body.toString().slice(0, 200)}`);
          assert.is(r.json().error.path, path);
        }),
        { seed: 20261125, numRuns: 12 },
      );
    });
  }
}

test.after(async () => {
  await server.close();
});

test.run();
