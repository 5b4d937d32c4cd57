// run-tests: parallel
// The remove-background endpoint's `channels` and `trim_margin` through real HTTP on loopback: the
// mask is a single-band PNG equal to the cut-out's alpha, a margin gives the exact size, and bad
// values are 400 with their path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, disc } from '../helpers/images.js';
import { post, startTestServer, type Reply, type TestServer } from '../helpers/server.js';

let server: TestServer;
const input = disc(160, 120, 36, [220, 30, 30], [255, 255, 255], { alpha: false });

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

function assertError(reply: Reply, code: string, path: string, text: RegExp) {
  assert.is(reply.status, 400, reply.body.toString());
  const body = reply.json();
  assert.is(body.error.code, code);
  assert.is(body.error.path, path);
  assert.match(body.error.message, text);
}

const rb = (fields: Record<string, string | Buffer>) => post(server.url, '/images/remove-background', { input, output: 'raw', ...fields });

test('channels=alpha: a single-band greyscale PNG equal to the cut-out alpha', async () => {
  const cutout = await rb({});
  const mask = await rb({ channels: 'alpha' });
  assert.is(mask.status, 200, mask.body.toString());
  assert.is(mask.headers.get('content-type'), 'image/png');
  assert.is(mask.body[25], 0, 'PNG colour type 0 (greyscale, no alpha)');
  const a = await decode(cutout.body), m = await decode(mask.body);
  assert.equal([m.width, m.height], [a.width, a.height]);
  for (let i = 0; i < a.width * a.height; i++) {
    if (m.data[i * 4] !== a.data[i * 4 + 3]) assert.unreachable(`pixel ${i}: mask ${m.data[i * 4]}, alpha ${a.data[i * 4 + 3]}`);
  }
});

test('trim_margin: pixels and a percentage give the exact size', async () => {
  const trimmed = await rb({ trim: 'true' });
  const w = Number(trimmed.headers.get('x-image-width')), h = Number(trimmed.headers.get('x-image-height'));
  const px = await rb({ trim: 'true', trim_margin: '30' });
  assert.is(px.status, 200, px.body.toString());
  assert.equal([Number(px.headers.get('x-image-width')), Number(px.headers.get('x-image-height'))], [w + 60, h + 60]);
  const share = await rb({ trim: 'true', trim_margin: '25%' });
  assert.equal([Number(share.headers.get('x-image-width')), Number(share.headers.get('x-image-height'))], [w + 2 * Math.round(w / 4), h + 2 * Math.round(h / 4)]);
});

test('bad channels and trim_margin: 400 invalid_field with the path', async () => {
  assertError(await rb({ trim_margin: '10' }), 'invalid_field', 'trim_margin', /needs trim=true/);
  assertError(await rb({ trim: 'false', trim_margin: '10%' }), 'invalid_field', 'trim_margin', /needs trim=true/);
  for (const bad of ['501', '-1', '51%', '1.5', 'ten', '', '9'.repeat(5000)]) {
    assertError(await rb({ trim: 'true', trim_margin: bad }), 'invalid_field', 'trim_margin', /trim_margin must be/);
  }
  assertError(await rb({ channels: 'rgb' }), 'invalid_field', 'channels', /rgba, alpha/);
});

test.run();
