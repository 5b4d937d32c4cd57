// run-tests: parallel
// The remove.bg-compatible routes through real HTTP on loopback, every request and answer through
// the validating front (test/helpers/removebg-front.ts): checked against remove.bg's own OpenAPI
// document read from its package. The three bodies, every field's mapping and its errors with the
// document's codes and statuses, the pixels of format, crop, crop_margin, bg_color, channels and
// zip, /account, /improve, the key, load shedding, the off switch and the metrics' labels.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { unzipSync } from 'fflate';
import { decode, disc, isPng, pixel, distance, type Decoded } from '../helpers/images.js';
import { form, scrapeMetrics, startTestServer, TEST_KEY, type TestServer } from '../helpers/server.js';
import { send, startRemoveBgFront, type RemoveBgBody, type RemoveBgFront, type Sent } from '../helpers/removebg-front.js';
import { BASE_PATH } from '../helpers/removebg-document.js';
import { waitFor } from '../helpers/wait.js';
import { knownType, modelFor, parseSettings } from '../../server/foreign/removebg-fields.js';

const RED: [number, number, number] = [220, 30, 30];
const input = disc(200, 150, 40, RED, [255, 255, 255], { alpha: false });
const photo = disc(800, 600, 160, RED, [255, 255, 255], { alpha: false }); // 0.48 MP: above preview's 0.25
const large = disc(1200, 900, 240, RED, [255, 255, 255], { alpha: false }); // over the server's pixel limit
const blue = disc(60, 40, 1, [20, 40, 230], [20, 40, 230], { alpha: false }); // a background image, all blue
let server: TestServer;
let front: RemoveBgFront;
let origin: http.Server;
let originBase = '';
let originHits = 0;
/** /slow.png answers when this is called (set when it is asked for). */
let releaseSlow: () => void = () => {};
let slowAsked: () => void = () => {};
/** Requests sent wrong on purpose: the document may (or, where its schema is loose, may not) see it. */
const invalidOnPurpose = new Set<Sent['exchange']>();

test.before(async () => {
  origin = http.createServer((req, res) => {
    originHits++;
    if (req.url === '/subject.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(input);
    else if (req.url === '/blue.png') res.writeHead(200, { 'Content-Type': 'image/png' }).end(blue);
    else if (req.url === '/slow.png') {
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': input.length });
      releaseSlow = () => res.end(input);
      slowAsked();
    }
    else res.writeHead(404).end('no');
  });
  await new Promise<void>((r) => origin.listen(0, '127.0.0.1', () => r()));
  originBase = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  // image_url on loopback: the guard is off here (its refusals are input-url.test.ts's).
  server = await startTestServer({ MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_MAX_INPUT_PIXELS: '1000000', MATTE_MAX_INPUT_BYTES: '200000', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
  front = await startRemoveBgFront(server.url);
});
test.after(async () => {
  await front.close();
  await server.close();
  origin.close();
});

const removebg = (body: RemoveBgBody, options: { key?: string | null; accept?: string } = {}) => send(front, 'POST', `${BASE_PATH}/removebg`, body, options);

/** An answer the document describes and the request it describes too. */
function assertDocumented(reply: Sent): void {
  assert.equal(reply.exchange.responseErrors, [], `answer ${reply.status} against the document`);
  if (!invalidOnPurpose.has(reply.exchange)) assert.equal(reply.exchange.requestErrors, [], 'request against the document');
}

function assertOk(reply: Sent, type: string): void {
  assert.is(reply.status, 200, reply.body.toString().slice(0, 300));
  assertDocumented(reply);
  assert.is(reply.headers.get('content-type'), type);
  assert.is(reply.headers.get('x-credits-charged'), '0');
}

/** A 400 (or other status) in remove.bg's shape with the code, sent wrong on purpose. */
async function assertError(sent: Promise<Sent>, status: number, code: string, options: { documentSees?: boolean } = {}): Promise<Sent> {
  const reply = await sent;
  invalidOnPurpose.add(reply.exchange);
  assert.is(reply.status, status, reply.body.toString().slice(0, 300));
  assertDocumented(reply);
  const body = reply.json();
  assert.is(body.errors.length, 1);
  assert.is(body.errors[0].code, code, JSON.stringify(body));
  assert.type(body.errors[0].title, 'string');
  assert.type(body.errors[0].detail, 'string');
  if (options.documentSees) assert.ok(reply.exchange.requestErrors.length > 0, 'the document refuses it too');
  return reply;
}

/** The box of alpha > 0. */
function alphaBox(image: Decoded): { left: number; top: number; width: number; height: number } {
  let x0 = image.width, y0 = image.height, x1 = -1, y1 = -1;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if (pixel(image, x, y)[3] > 0) {
        x0 = Math.min(x0, x), x1 = Math.max(x1, x), y0 = Math.min(y0, y), y1 = Math.max(y1, y);
      }
    }
  }
  return { left: x0, top: y0, width: x1 - x0 + 1, height: y1 - y0 + 1 };
}

let cutout: Buffer; // the PNG answer to `input` at size=full, the reference of the tests below

// ---- the three bodies ---------------------------------------------------------------------------

test('multipart image_file: the cut-out as PNG with transparency, X-Width/X-Height, X-Credits-Charged 0, no X-Type', async () => {
  const reply = await removebg({ multipart: { image_file: input, size: 'full' } });
  assertOk(reply, 'image/png');
  assert.is(reply.headers.get('x-width'), '200');
  assert.is(reply.headers.get('x-height'), '150');
  assert.is(reply.headers.get('x-type'), null, 'type=auto: matte does not classify');
  const image = await decode(reply.body);
  assert.ok(image.hasAlpha);
  assert.is(pixel(image, 2, 2)[3], 0, 'the background is transparent');
  assert.ok(distance(pixel(image, 100, 75), [...RED, 255]) <= 2, 'the subject is kept');
  cutout = reply.body;
});

test('JSON image_file_b64 with Accept: application/json: {"data": {"result_b64"}} of the same image', async () => {
  const reply = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full' } }, { accept: 'application/json' });
  assertOk(reply, 'application/json; charset=utf-8');
  assert.is(reply.headers.get('x-width'), '200');
  assert.ok(Buffer.from(reply.json().data.result_b64, 'base64').equals(cutout));
});

test('url-encoded image_url (fetched through the URL guard) and a data: URL in image_file_b64: the same image', async () => {
  const hits = originHits;
  const reply = await removebg({ urlencoded: { image_url: `${originBase}/subject.png`, size: 'full' } });
  assertOk(reply, 'image/png');
  assert.is(originHits, hits + 1);
  assert.ok(reply.body.equals(cutout));
  const b64 = await removebg({ urlencoded: { image_file_b64: `data:image/png;base64,${input.toString('base64')}`, size: 'full' } });
  assertOk(b64, 'image/png');
  assert.ok(b64.body.equals(cutout));
});

test('exactly one source: missing_source, multiple_sources; empty values count as absent', async () => {
  await assertError(removebg({ json: { size: 'full' } }), 400, 'missing_source');
  await assertError(removebg({ json: { image_url: '', image_file_b64: '', size: 'full' } }), 400, 'missing_source');
  await assertError(removebg({ multipart: { image_file: input, image_url: `${originBase}/subject.png` } }), 400, 'multiple_sources');
  await assertError(removebg({ json: { image_url: `${originBase}/subject.png`, image_file_b64: input.toString('base64') } }), 400, 'multiple_sources');
  const emptyUrl = await removebg({ multipart: { image_file: input, image_url: '', size: 'full' } });
  assertOk(emptyUrl, 'image/png');
});

test('bodies matte cannot read: other media types, broken JSON, unknown parameters, a file given as text', async () => {
  const text = await fetch(`${front.url}${BASE_PATH}/removebg`, { method: 'POST', headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': 'text/plain' }, body: 'image_url=x' });
  assert.is(text.status, 400);
  assert.is(((await text.json()) as any).errors[0].code, 'invalid_content_type');
  const broken = await fetch(`${front.url}${BASE_PATH}/removebg`, { method: 'POST', headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': 'application/json' }, body: '{"image_url":' });
  assert.is(broken.status, 400);
  assert.is(((await broken.json()) as any).errors[0].code, 'invalid_json');
  for (const exchange of front.exchanges.slice(-2)) {
    invalidOnPurpose.add(exchange);
    assert.equal(exchange.responseErrors, []);
  }
  await assertError(removebg({ json: { image_file_b64: input.toString('base64'), sizes: 'full' } }), 400, 'unknown_parameter');
  await assertError(removebg({ multipart: { image_file: input, colour: 'red' } }), 400, 'unknown_parameter');
  await assertError(removebg({ json: { image_file: input.toString('base64') } }), 400, 'invalid_parameter');
  await assertError(removebg({ json: { image_file_b64: input.toString('base64'), crop: { yes: 1 } } }), 400, 'invalid_parameter', { documentSees: true });
  await assertError(removebg({ urlencoded: { image_file_b64: 'not base64!' } }), 400, 'invalid_image_file_b64');
});

// ---- fields and their errors -------------------------------------------------------------------

test('field values the document refuses are refused with its codes', async () => {
  const b64 = input.toString('base64');
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ size: 'huge' }, 'invalid_size'],
    [{ format: 'gif' }, 'invalid_format'],
    [{ channels: 'rgb' }, 'invalid_channels'],
    [{ type: 'animal' }, 'invalid_type'],
    [{ type_level: '3' }, 'invalid_type_level'],
  ];
  for (const [fields, code] of cases) await assertError(removebg({ json: { image_file_b64: b64, ...fields } }), 400, code, { documentSees: true });
});

test("field values the document's loose strings allow but remove.bg's text refuses: 400 with its codes", async () => {
  const b64 = input.toString('base64');
  const cases: Array<[Record<string, string>, string]> = [
    [{ bg_color: 'notacolour' }, 'invalid_bg_color'],
    [{ bg_color: 'rgb(1,2,3)' }, 'invalid_bg_color'],
    [{ bg_color: '12345' }, 'invalid_bg_color'],
    [{ crop: 'true', crop_margin: 'ten' }, 'invalid_crop_margin'],
    [{ crop: 'true', crop_margin: '501px' }, 'invalid_crop_margin'],
    [{ crop: 'true', crop_margin: '51%' }, 'invalid_crop_margin'],
    [{ crop: 'true', crop_margin: '1px 2px 3px' }, 'invalid_crop_margin'],
    [{ crop: 'false', crop_margin: '1px 2px 3px 4px 5px' }, 'invalid_crop_margin'],
    [{ roi: '0% 0% 100%' }, 'invalid_roi'],
    [{ roi: '0 0 10 10' }, 'invalid_roi'],
    [{ roi: '50% 0% 10% 100%' }, 'roi_region_empty'],
    [{ scale: '5%' }, 'invalid_scale'],
    [{ scale: 'big' }, 'invalid_scale'],
    [{ position: '101%' }, 'invalid_position'],
    [{ position: 'left' }, 'invalid_position'],
    [{ shadow_type: 'neon' }, 'invalid_shadow_type'],
    [{ shadow_opacity: '150' }, 'invalid_shadow_opacity'],
    [{ bg_color: 'fff', bg_image_url: `${originBase}/subject.png` }, 'multiple_bg_sources'],
    [{ bg_image_url: 'ftp://example.invalid/a.png' }, 'invalid_bg_image_url'],
  ];
  for (const [fields, code] of cases) await assertError(removebg({ urlencoded: { image_file_b64: b64, ...fields } }), 400, code);
  await assertError(removebg({ urlencoded: { image_url: 'not a url' } }), 400, 'invalid_image_url');
  await assertError(removebg({ json: { image_file_b64: b64, crop: 'maybe' } }), 400, 'invalid_crop', { documentSees: true });
  await assertError(removebg({ json: { image_file_b64: b64, semitransparency: 'sometimes' } }), 400, 'invalid_semitransparency', { documentSees: true });
});

test('the input: unreadable bytes, a failed download, too many bytes, too many pixels, no foreground', async () => {
  await assertError(removebg({ multipart: { image_file: Buffer.from('this is not an image at all') } }), 400, 'failed_to_read_image');
  await assertError(removebg({ multipart: { image_file: input.subarray(0, 60) } }), 400, 'failed_to_read_image');
  await assertError(removebg({ multipart: { image_file: disc(120, 90, 1, [40, 90, 200], [40, 90, 200], { alpha: false }) } }), 400, 'unknown_foreground');
  const hits = originHits;
  await assertError(removebg({ json: { image_url: `${originBase}/missing.png` } }), 400, 'failed_image_download');
  assert.is(originHits, hits + 1);
  const big = Buffer.alloc(200_001, 7);
  await assertError(removebg({ multipart: { image_file: big } }), 400, 'file_too_large');
  await assertError(removebg({ json: { image_file_b64: big.toString('base64') } }), 400, 'file_too_large');
  await assertError(removebg({ json: { image_file_b64: large.toString('base64'), size: 'full' } }), 400, 'resolution_too_high');
  await assertError(removebg({ json: { image_file_b64: large.toString('base64') } }), 400, 'resolution_too_high');
});

// ---- the pixels --------------------------------------------------------------------------------

test('format=auto: PNG with transparency; JPEG under an opaque bg_color; PNG under a translucent one', async () => {
  const b64 = input.toString('base64');
  const opaque = await removebg({ json: { image_file_b64: b64, size: 'full', bg_color: '81d4fa' } });
  assertOk(opaque, 'image/jpeg');
  const image = await decode(opaque.body);
  assert.ok(distance(pixel(image, 2, 2), [0x81, 0xd4, 0xfa, 255]) <= 3, `background ${pixel(image, 2, 2)}`);
  assert.ok(distance(pixel(image, 100, 75), [...RED, 255]) <= 6, `subject ${pixel(image, 100, 75)}`);
  const translucent = await removebg({ json: { image_file_b64: b64, size: 'full', bg_color: '81d4fa80' } });
  assertOk(translucent, 'image/png');
  const t = await decode(translucent.body);
  assert.ok(distance(pixel(t, 2, 2), [0x81, 0xd4, 0xfa, 0x80]) <= 1, `translucent background ${pixel(t, 2, 2)}`);
  const png = await removebg({ json: { image_file_b64: b64, size: 'full', format: 'png', bg_color: 'fff' } });
  assertOk(png, 'image/png');
  const jpg = await removebg({ json: { image_file_b64: b64, size: 'full', format: 'jpg' } });
  assertOk(jpg, 'image/jpeg');
  assert.ok(distance(pixel(await decode(jpg.body), 2, 2), [255, 255, 255, 255]) <= 2, 'jpg without bg_color: on white');
});

test("bg_color in remove.bg's forms: 3-, 4-, 6- and 8-digit hex without #, and colour names", async () => {
  const forms: Array<[string, [number, number, number, number]]> = [
    ['fff', [255, 255, 255, 255]],
    ['0f08', [0, 255, 0, 0x88]],
    ['81D4FA', [0x81, 0xd4, 0xfa, 255]],
    ['81d4fa77', [0x81, 0xd4, 0xfa, 0x77]],
    ['green', [0, 128, 0, 255]],
    ['#336699', [0x33, 0x66, 0x99, 255]],
  ];
  for (const [text, rgba] of forms) {
    const reply = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', format: 'png', bg_color: text } });
    assertOk(reply, 'image/png');
    assert.ok(distance(pixel(await decode(reply.body), 1, 1), rgba) <= 1, `${text}: ${pixel(await decode(reply.body), 1, 1)}`);
  }
});

test("crop: the subject's box; crop_margin in pixels, in % of the subject, one, two and four values", async () => {
  const full = await decode(cutout);
  const box = alphaBox(full);
  const b64 = input.toString('base64');
  const cropped = await removebg({ json: { image_file_b64: b64, size: 'full', crop: true } });
  assertOk(cropped, 'image/png');
  assert.equal([Number(cropped.headers.get('x-width')), Number(cropped.headers.get('x-height'))], [box.width, box.height]);
  const c = await decode(cropped.body);
  for (const [x, y] of [[0, 0], [box.width >> 1, box.height >> 1], [box.width - 1, box.height - 1]] as const) {
    assert.equal(pixel(c, x, y), pixel(full, box.left + x, box.top + y));
  }
  const size = async (margin: string) => {
    const reply = await removebg({ json: { image_file_b64: b64, size: 'full', crop: true, crop_margin: margin } });
    assertOk(reply, 'image/png');
    return { reply, width: Number(reply.headers.get('x-width')), height: Number(reply.headers.get('x-height')) };
  };
  const px = await size('30px');
  assert.equal([px.width, px.height], [box.width + 60, box.height + 60]);
  const bare = await size('30');
  assert.equal([bare.width, bare.height], [box.width + 60, box.height + 60]);
  const percent = await size('10%');
  assert.equal([percent.width, percent.height], [box.width + 2 * Math.round(box.width / 10), box.height + 2 * Math.round(box.height / 10)]);
  const two = await size('5px 25%');
  assert.equal([two.width, two.height], [box.width + 2 * Math.round(box.width / 4), box.height + 10]);
  const four = await size('1px 2px 3px 4px');
  assert.equal([four.width, four.height], [box.width + 6, box.height + 4]);
  const f = await decode(four.reply.body);
  assert.equal(alphaBox(f), { left: 4, top: 1, width: box.width, height: box.height }, 'top 1, right 2, bottom 3, left 4');
  const withoutCrop = await removebg({ json: { image_file_b64: b64, size: 'full', crop_margin: '30px' } });
  assertOk(withoutCrop, 'image/png');
  assert.is(withoutCrop.headers.get('x-width'), '200', 'crop_margin without crop has no effect (the document)');
});

test('channels=alpha: the matte alone, a single-band PNG equal to the cut-out alpha, the background not applied', async () => {
  const reply = await removebg({ multipart: { image_file: input, size: 'full', channels: 'alpha', bg_color: 'green' } });
  assertOk(reply, 'image/png');
  assert.is(reply.body[25], 0, 'PNG colour type 0 (greyscale)');
  const mask = await decode(reply.body);
  const full = await decode(cutout);
  for (let i = 0; i < full.width * full.height; i++) {
    if (mask.data[i * 4] !== full.data[i * 4 + 3]) assert.unreachable(`pixel ${i}: mask ${mask.data[i * 4]}, alpha ${full.data[i * 4 + 3]}`);
  }
});

test('format=zip: color.jpg and alpha.png that recombine into the PNG answer (alpha exact, colour within JPEG error)', async () => {
  const reply = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', format: 'zip' } });
  assert.is(reply.status, 200);
  assert.is(reply.headers.get('content-type'), 'application/zip');
  // remove.bg answers a zip as application/zip, which its document's `image/*` does not name.
  assert.equal(reply.exchange.responseErrors, ["media type application/zip is not among the document's (application/json, image/*)"]);
  assert.equal(reply.exchange.requestErrors, []);
  const files = unzipSync(new Uint8Array(reply.body));
  assert.equal(Object.keys(files).sort(), ['alpha.png', 'color.jpg']);
  const colourBytes = Buffer.from(files['color.jpg']!), alphaBytes = Buffer.from(files['alpha.png']!);
  assert.equal([...colourBytes.subarray(0, 3)], [0xff, 0xd8, 0xff], 'a JPEG');
  assert.ok(isPng(alphaBytes) && alphaBytes[25] === 0, 'a greyscale PNG');
  const colour = await decode(colourBytes), alpha = await decode(alphaBytes), png = await decode(cutout);
  let worst = 0, sum = 0, counted = 0;
  for (let i = 0; i < png.width * png.height; i++) {
    assert.is(alpha.data[i * 4], png.data[i * 4 + 3], `alpha at ${i}`);
    if (png.data[i * 4 + 3] === 0) continue;
    for (let c = 0; c < 3; c++) {
      const d = Math.abs(colour.data[i * 4 + c]! - png.data[i * 4 + c]!);
      worst = Math.max(worst, d), (sum += d), counted++;
    }
  }
  assert.ok(sum / counted < 2.5, `mean colour error ${(sum / counted).toFixed(2)}`);
  assert.ok(worst <= 40, `largest colour error ${worst}`);
  const json = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', format: 'zip' } }, { accept: 'application/json' });
  assertOk(json, 'application/json; charset=utf-8');
  assert.ok(Buffer.from(json.json().data.result_b64, 'base64').equals(reply.body), 'the same zip, base64 in JSON');
});

test('type: a person model for person when one is loaded, else the default; X-Type only where known', async () => {
  assert.is(modelFor('person', ['u2netp', 'u2net_human_seg']), 'u2net_human_seg');
  assert.is(modelFor('person', ['isnet', 'u2net_human_seg', 'birefnet-portrait']), 'birefnet-portrait');
  assert.is(modelFor('person', ['u2netp', 'isnet']), 'u2netp');
  assert.is(modelFor('product', ['isnet', 'u2net_human_seg']), 'isnet');
  assert.is(knownType(parseSettings({ type: 'person', type_level: 'none' }, {})), undefined);
  const person = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', type: 'person' } });
  assertOk(person, 'image/png');
  assert.is(person.headers.get('x-type'), 'person');
  const car = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', type: 'car', type_level: 'latest' } });
  assertOk(car, 'image/png');
  assert.is(car.headers.get('x-type'), 'car');
  const none = await removebg({ json: { image_file_b64: input.toString('base64'), size: 'full', type: 'product', type_level: 'none' } });
  assertOk(none, 'image/png');
  assert.is(none.headers.get('x-type'), null);
});

// ---- the staged fields: size, roi, scale/position, shadows, semitransparency, background images ---

const b64 = (image: Buffer) => image.toString('base64');
const foregroundOf = (reply: Sent) => ['left', 'top', 'width', 'height'].map((side) => Number(reply.headers.get(`x-foreground-${side}`))) as [number, number, number, number];

test('size: preview (the default, 0.25 MP) and its aliases, medium and hd caps, full and auto the image itself', async () => {
  const sizes: Array<[string | undefined, [number, number]]> = [
    [undefined, [577, 433]],
    ['preview', [577, 433]],
    ['small', [577, 433]],
    ['regular', [577, 433]],
    ['medium', [800, 600]],
    ['hd', [800, 600]],
    ['full', [800, 600]],
    ['4k', [800, 600]],
    ['auto', [800, 600]],
    ['50MP', [800, 600]],
  ];
  for (const [size, [width, height]] of sizes) {
    const reply = await removebg({ json: { image_file_b64: b64(photo), ...(size ? { size } : {}) } });
    if (size && !['preview', 'full', 'auto'].includes(size)) {
      // The document's text takes these (for backwards-compatibility, aliases); its enum does not list them.
      invalidOnPurpose.add(reply.exchange);
      assert.equal(reply.exchange.requestErrors, ['body.size: must be equal to one of the allowed values']);
    }
    assertOk(reply, 'image/png');
    assert.equal([Number(reply.headers.get('x-width')), Number(reply.headers.get('x-height'))], [width, height], `size=${size}`);
    const image = await decode(reply.body);
    assert.equal([image.width, image.height], [width, height]);
  }
});

test("X-Foreground-* and foreground_*: the subject's box in the output's pixels, after the size cap and the crop", async () => {
  const preview = await removebg({ json: { image_file_b64: b64(photo) } });
  assertOk(preview, 'image/png');
  const box = alphaBox(await decode(preview.body));
  assert.equal(foregroundOf(preview), [box.left, box.top, box.width, box.height]);
  assert.ok(Math.abs(box.width - 231) <= 3 && Math.abs(box.left - 173) <= 3, `the disc scaled to the preview: ${JSON.stringify(box)}`);
  const json = await removebg({ json: { image_file_b64: b64(photo) } }, { accept: 'application/json' });
  assertOk(json, 'application/json; charset=utf-8');
  const data = json.json().data;
  assert.equal([data.foreground_left, data.foreground_top, data.foreground_width, data.foreground_height], [box.left, box.top, box.width, box.height]);
  const cropped = await removebg({ json: { image_file_b64: b64(input), size: 'full', crop: true, crop_margin: '1px 2px 3px 4px' } });
  assertOk(cropped, 'image/png');
  const [left, top, width, height] = foregroundOf(cropped);
  assert.equal([left, top], [4, 1]);
  assert.equal([width + 6, height + 4], [Number(cropped.headers.get('x-width')), Number(cropped.headers.get('x-height'))]);
});

test("roi: only the region can be foreground, in the input's pixels or percentages; outside the image or empty: the document's codes", async () => {
  const half = await removebg({ json: { image_file_b64: b64(photo), roi: '0px 0px 400px 600px' } });
  assertOk(half, 'image/png');
  const [left, , width] = foregroundOf(half);
  assert.ok(left + width <= Math.ceil(577 / 2) + 1, `the left half of the input only: ${foregroundOf(half)}`);
  const percent = await removebg({ json: { image_file_b64: b64(photo), roi: '50% 0% 100% 100%' } });
  assertOk(percent, 'image/png');
  assert.ok(foregroundOf(percent)[0] >= Math.floor(577 / 2) - 1, `the right half: ${foregroundOf(percent)}`);
  await assertError(removebg({ json: { image_file_b64: b64(photo), roi: '0px 0px 900px 100px' } }), 400, 'roi_exceeds_bounds');
  await assertError(removebg({ json: { image_file_b64: b64(photo), roi: '50% 0% 100px 100%' } }), 400, 'roi_region_empty');
});

test('scale and position: the subject takes that share of the canvas, centred unless placed; a percentage position', async () => {
  const scaled = await removebg({ json: { image_file_b64: b64(input), size: 'full', scale: '50%' } });
  assertOk(scaled, 'image/png');
  const [left, top, width, height] = foregroundOf(scaled);
  assert.ok(Math.abs(Math.max(width / 200, height / 150) - 0.5) <= 0.02, `50% of the canvas: ${foregroundOf(scaled)}`);
  assert.ok(Math.abs(left + width / 2 - 100) <= 1 && Math.abs(top + height / 2 - 75) <= 1, `centred: ${foregroundOf(scaled)}`);
  const corner = await removebg({ json: { image_file_b64: b64(input), size: 'full', position: '0% 100%' } });
  assertOk(corner, 'image/png');
  const [cl, ct, cw, ch] = foregroundOf(corner);
  assert.equal([cl, ct + ch], [0, 150], `left and bottom: ${foregroundOf(corner)}`);
  assert.ok(Math.abs(cw - 80) <= 3, 'the subject keeps its size');
});

test('add_shadow / shadow_type / shadow_opacity: a shadow under the subject; semitransparency=false: a hard matte', async () => {
  const plain = await decode(cutout);
  const count = (image: Decoded) => {
    let n = 0;
    for (let i = 3; i < image.data.length; i += 4) if (image.data[i]! > 0) n++;
    return n;
  };
  const shadows: Array<Record<string, string>> = [{ add_shadow: 'true' }, { shadow_type: 'drop', shadow_opacity: '80' }, { shadow_type: 'car' }, { shadow_type: '3D' }];
  for (const fields of shadows) {
    const reply = await removebg({ urlencoded: { image_file_b64: b64(input), size: 'full', ...fields } });
    assertOk(reply, 'image/png');
    const shadowed = await decode(reply.body);
    assert.ok(count(shadowed) > count(plain) + 100, `${JSON.stringify(fields)}: ${count(shadowed)} pixels with alpha, ${count(plain)} without a shadow`);
    assert.ok(distance(pixel(shadowed, 100, 75), [...RED, 255]) <= 2, 'the subject over its shadow');
  }
  const none = await removebg({ urlencoded: { image_file_b64: b64(input), size: 'full', add_shadow: 'true', shadow_type: 'none' } });
  assertOk(none, 'image/png');
  assert.is(count(await decode(none.body)), count(plain), 'shadow_type=none: no shadow');
  const hard = await removebg({ urlencoded: { image_file_b64: b64(photo), semitransparency: 'false' } });
  assertOk(hard, 'image/png');
  const h = await decode(hard.body);
  for (let y = 1; y < h.height - 1; y++) {
    for (let x = 1; x < h.width - 1; x++) {
      const a = pixel(h, x, y)[3];
      if (a === 0 || a === 255) continue;
      const around = [pixel(h, x - 1, y), pixel(h, x + 1, y), pixel(h, x, y - 1), pixel(h, x, y + 1)].map((p) => p[3]);
      if (!around.some((v) => v === 0 || v === 255)) assert.unreachable(`a partial alpha ${a} away from the edge at ${x},${y}`);
    }
  }
});

test('bg_image_url and bg_image_file: the cut-out over the image, covered and centred (format=auto: JPEG); a failed download', async () => {
  const url = await removebg({ json: { image_file_b64: b64(input), size: 'full', bg_image_url: `${originBase}/blue.png` } });
  assertOk(url, 'image/jpeg');
  const image = await decode(url.body);
  assert.equal([image.width, image.height], [200, 150]);
  assert.ok(distance(pixel(image, 2, 2), [20, 40, 230, 255]) <= 6, `the background: ${pixel(image, 2, 2)}`);
  assert.ok(distance(pixel(image, 100, 75), [...RED, 255]) <= 6, `the subject: ${pixel(image, 100, 75)}`);
  const file = await removebg({ multipart: { image_file: input, size: 'full', bg_image_file: blue } });
  assertOk(file, 'image/jpeg');
  assert.ok(distance(pixel(await decode(file.body), 197, 147), [20, 40, 230, 255]) <= 6);
  await assertError(removebg({ json: { image_file_b64: b64(input), bg_image_url: `${originBase}/missing.png` } }), 400, 'failed_bg_download');
  await assertError(removebg({ multipart: { image_file: input, bg_image_file: blue, bg_color: 'fff' } }), 400, 'multiple_bg_sources');
});

// ---- /account, /improve, the key ---------------------------------------------------------------

test('GET /v1.0/account: no credits, every call free', async () => {
  const reply = await send(front, 'GET', `${BASE_PATH}/account`);
  assert.is(reply.status, 200);
  assertDocumented(reply);
  assert.equal(reply.json(), { data: { attributes: { credits: { total: 0, subscription: 0, payg: 0, enterprise: 0 }, api: { free_calls: 2 ** 31 - 1, sizes: 'all' } } } });
});

test('POST /v1.0/improve: accepted and dropped (an id, nothing fetched or kept); one source, as /removebg', async () => {
  const hits = originHits;
  const url = await send(front, 'POST', `${BASE_PATH}/improve`, { json: { image_url: `${originBase}/subject.png`, image_filename: 'a.png', tag: 'batch_1' } });
  assert.is(url.status, 200);
  assertDocumented(url);
  assert.match(url.json().id, /^[0-9a-f-]{36}$/);
  assert.is(originHits, hits, 'the URL is not fetched');
  const file = await send(front, 'POST', `${BASE_PATH}/improve`, { multipart: { image_file: input, tag: 'x' } });
  assert.is(file.status, 200);
  assertDocumented(file);
  await assertError(send(front, 'POST', `${BASE_PATH}/improve`, { json: { tag: 'x' } }), 400, 'missing_source');
  await assertError(send(front, 'POST', `${BASE_PATH}/improve`, { json: { image_file_b64: input.toString('base64'), size: 'full' } }), 400, 'unknown_parameter');
});

test('a missing or wrong X-Api-Key: 403 on every route, before the body is read', async () => {
  for (const key of [null, 'wrong-key']) {
    await assertError(removebg({ multipart: { image_file: input } }, { key }), 403, 'unauthorized', { documentSees: key === null });
    await assertError(send(front, 'GET', `${BASE_PATH}/account`, undefined, { key }), 403, 'unauthorized');
    await assertError(send(front, 'POST', `${BASE_PATH}/improve`, { json: { image_url: `${originBase}/subject.png` } }, { key }), 403, 'unauthorized');
  }
  const missing = await removebg({ multipart: { image_file: input } }, { key: null });
  invalidOnPurpose.add(missing.exchange);
  assert.is(missing.json().errors[0].title, 'Missing API Key');
  const wrong = await removebg({ multipart: { image_file: input } }, { key: 'wrong' });
  invalidOnPurpose.add(wrong.exchange);
  assert.is(wrong.json().errors[0].title, 'Invalid API Key');
});

// ---- what matte's own routes have: metrics, the OpenAPI document -------------------------------

test("metrics: the routes' patterns as labels, the model's job counted", async () => {
  const text = await scrapeMetrics(server);
  assert.match(text, /matte_http_requests_total\{route="\/v1\.0\/removebg",method="POST",status="200"\} \d+/);
  assert.match(text, /matte_http_requests_total\{route="\/v1\.0\/removebg",method="POST",status="400"\} \d+/);
  assert.match(text, /matte_http_requests_total\{route="\/v1\.0\/account",method="GET",status="200"\} \d+/);
  assert.match(text, /matte_model_job_duration_seconds_count\{model="u2netp"\} \d+/);
});

test("matte's own OpenAPI document lists the three routes", async () => {
  const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  assert.ok(doc.paths['/v1.0/removebg']?.post);
  assert.ok(doc.paths['/v1.0/account']?.get);
  assert.ok(doc.paths['/v1.0/improve']?.post);
});

test('a client that goes away while its image_url is fetched gets no job (outside the document: no answer to check)', async () => {
  const jobs = async () => Number(/matte_job_duration_seconds_count\{endpoint="\/v1\.0\/removebg"\} (\d+)/.exec(await scrapeMetrics(server))?.[1] ?? 0);
  const before = await jobs();
  const asked = new Promise<void>((r) => (slowAsked = r));
  const controller = new AbortController();
  const sent = fetch(`${server.url}${BASE_PATH}/removebg`, {
    method: 'POST',
    headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': 'application/json' },
    body: JSON.stringify({ image_url: `${originBase}/slow.png`, size: 'full' }),
    signal: controller.signal,
  }).catch((e: Error) => e);
  await asked;
  controller.abort();
  assert.instance(await sent, Error);
  const limiter = server.running.services.limiter;
  await waitFor('the server to see the client go', async () => new Promise<boolean>((resolve) => server.running.server.getConnections((_e, n) => resolve(n === 0))));
  releaseSlow();
  await waitFor('the request to end', () => limiter.stats.admitted === 0);
  assert.is(await jobs(), before, 'no job ran');
});

// ---- load shedding and the off switch (servers of their own) -----------------------------------

test('load shed: 429 with Retry-After in remove.bg shape; too many of one wrong key: 429 too, the right key still served', async () => {
  const small = await startTestServer({ MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '0', MATTE_AUTH_FAILURES_PER_MINUTE: '2' });
  const smallFront = await startRemoveBgFront(small.url);
  try {
    // One upload admitted and held open (its body never ends) fills the server.
    const whole = new Request('http://form.invalid/', { method: 'POST', body: form({ image_file: input }) });
    const bytes = new Uint8Array(await whole.arrayBuffer());
    const held = new AbortController();
    const stream = new ReadableStream({ start: (controller) => controller.enqueue(bytes.subarray(0, 100)) });
    const pending = fetch(`${small.url}${BASE_PATH}/removebg`, {
      method: 'POST',
      headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': whole.headers.get('content-type')! },
      body: stream,
      duplex: 'half',
      signal: held.signal,
    } as RequestInit).catch(() => undefined);
    await waitFor('the held upload to be admitted', () => small.running.services.limiter.stats.admitted === 1);
    const shed = await assertError(send(smallFront, 'POST', `${BASE_PATH}/removebg`, { multipart: { image_file: input, size: 'full' } }), 429, 'overloaded');
    assert.match(shed.headers.get('retry-after') ?? '', /^\d+$/);
    assert.is(shed.json().errors[0].title, 'Rate limit exceeded');
    held.abort();
    await pending;
    await waitFor('the held upload to end', () => small.running.services.limiter.stats.admitted === 0);
    for (let i = 0; i < 2; i++) await assertError(send(smallFront, 'GET', `${BASE_PATH}/account`, undefined, { key: 'wrong' }), 403, 'unauthorized');
    const throttled = await assertError(send(smallFront, 'GET', `${BASE_PATH}/account`, undefined, { key: 'wrong' }), 429, 'too_many_failures');
    assert.match(throttled.headers.get('retry-after') ?? '', /^\d+$/);
    // The right key from the same address is still served (one client's wrong keys lock out no other).
    assert.is((await send(smallFront, 'GET', `${BASE_PATH}/account`)).status, 200);
    const metrics = await small.running.services.metrics.registry.metrics();
    assert.match(metrics, /matte_http_unavailable_total\{code="overloaded"\} 1/);
  } finally {
    await smallFront.close();
    await small.close();
  }
});

test('MATTE_REMOVEBG_API=off: the three routes are 404 (outside the document: matte answers, not the API)', async () => {
  const off = await startTestServer({ MATTE_REMOVEBG_API: 'off' });
  try {
    for (const [method, path] of [['POST', '/removebg'], ['GET', '/account'], ['POST', '/improve']] as const) {
      const res = await fetch(`${off.url}${BASE_PATH}${path}`, { method, headers: { 'X-Api-Key': TEST_KEY }, body: method === 'POST' ? form({ image_file: input }) : undefined });
      assert.is(res.status, 404, `${method} ${path}`);
      assert.is(((await res.json()) as any).error.code, 'not_found');
    }
  } finally {
    await off.close();
  }
});

test('every answer of the suite is one the document describes (the zip aside), and every request sent right is one it accepts', async () => {
  assert.ok(front.exchanges.length > 60, `${front.exchanges.length} exchanges`);
  for (const exchange of front.exchanges) {
    const zip = exchange.response.headers['content-type'] === 'application/zip';
    if (!zip) assert.equal(exchange.responseErrors, [], `${exchange.request.method} ${exchange.request.path} ${exchange.response.status}`);
    if (!invalidOnPurpose.has(exchange)) assert.equal(exchange.requestErrors, [], `${exchange.request.method} ${exchange.request.path}`);
  }
});

test.run();
