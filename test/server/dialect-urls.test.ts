// run-tests: parallel
// Reading the URLs of the foreign dialects (server/foreign/): what the builders users run emit
// (@imgproxy/imgproxy-node 1.1.0, Nuxt Image 2.1.0's imgproxy, cloudflare and ipx providers) is
// read into matte's operations in each dialect's own order; imgproxy's signatures are checked as
// imgproxy checks them (key/salt pairs, truncated sizes); bad URLs are refused with the dialect's
// error, never accepted as something else. The pixels these URLs give: dialects.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { generateImageUrl } from '@imgproxy/imgproxy-node';
import { loadConfig } from '../../server/config.js';
import { cloudflareDialect, cloudflareOperations, readCloudflareOptions } from '../../server/foreign/cloudflare.js';
import { imgproxyDialect, imgproxyOperations, imgproxySignature, readImgproxyPath, verifyImgproxySignature } from '../../server/foreign/imgproxy.js';
import { ipxDialect, ipxOperations, readIpxModifiers } from '../../server/foreign/ipx.js';
import { resolveSource } from '../../server/foreign/sources.js';
import { HttpError } from '../../server/errors.js';

const KEY = 'a1'.repeat(32);
const SALT = 'b2'.repeat(16);
const pair = { key: Buffer.from(KEY, 'hex'), salt: Buffer.from(SALT, 'hex') };

/** Nuxt Image's providers, imported alone from their files (the package's exports do not list them). */
async function provider(name: string): Promise<{ getImage(src: string, options: Record<string, unknown>, ctx?: unknown): { url: string } }> {
  const file = createRequire(import.meta.url).resolve('@nuxt/image').replace(/dist\/.*$/, `dist/runtime/providers/${name}.js`);
  return ((await import(pathToFileURL(file).href)) as { default: () => never }).default();
}

const config = (env: Record<string, string> = {}) => loadConfig({ MATTE_IMGPROXY_KEY: KEY, MATTE_IMGPROXY_SALT: SALT, MATTE_SOURCES: 'https://src.example/', MATTE_SOURCE_BASE: 'https://shop.example/assets/', ...env });
const pathOf = (url: string) => new URL(url).pathname;
const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return err instanceof HttpError ? `${err.status} ${err.code}` : String(err);
  }
  return 'no error';
};
const ctx = {} as never;

// ---- imgproxy -----------------------------------------------------------------------------------

test("imgproxy: @imgproxy/imgproxy-node's signatures verify, under the key/salt pair that made them", () => {
  const url = generateImageUrl({ endpoint: 'http://h', url: 'https://src.example/a.jpg', options: { width: 300, format: 'webp' }, key: KEY, salt: SALT });
  const [, signature, ...rest] = pathOf(url).split('/');
  const path = `/${rest.join('/')}`;
  assert.ok(verifyImgproxySignature([pair], 32, signature!, path));
  const other = { key: Buffer.from('c3'.repeat(32), 'hex'), salt: pair.salt };
  assert.ok(verifyImgproxySignature([other, pair], 32, signature!, path), 'rotation: any listed pair');
  assert.not.ok(verifyImgproxySignature([other], 32, signature!, path));
  assert.not.ok(verifyImgproxySignature([pair], 32, signature!, path.replace('w:300', 'w:301')), 'tampered options');
  assert.not.ok(verifyImgproxySignature([pair], 32, signature!.slice(0, -1), path), 'a cut signature');
  assert.not.ok(verifyImgproxySignature([pair], 32, '', path));
});

test('imgproxy: a truncated signature (MATTE_IMGPROXY_SIGNATURE_SIZE) verifies at that size only', () => {
  const path = '/rs:fit:100:100/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw';
  const short = imgproxySignature(pair, path, 8);
  assert.is(short.length, 11);
  assert.ok(verifyImgproxySignature([pair], 8, short, path));
  assert.not.ok(verifyImgproxySignature([pair], 32, short, path));
  assert.not.ok(verifyImgproxySignature([pair], 8, imgproxySignature(pair, path, 32), path));
});

test('imgproxy: the parse of a signed URL checks the signature on the path as received, before any option', () => {
  const dialect = imgproxyDialect(config())!;
  const good = pathOf(generateImageUrl({ endpoint: 'http://h', url: 'https://src.example/a.jpg', options: { width: 300 }, key: KEY, salt: SALT }));
  assert.is(dialect.parse(good, '', ctx).source, 'https://src.example/a.jpg');
  assert.is(code(() => dialect.parse(good.replace('w:300', 'w:30'), '', ctx)), '403 invalid_signature');
  // An unknown option under a wrong signature is still 403: nothing is read before the signature.
  assert.is(code(() => dialect.parse(good.replace('w:300', 'nope:1'), '', ctx)), '403 invalid_signature');
  assert.is(code(() => dialect.parse('/insecure/w:300/plain/https://src.example/a.jpg', '', ctx)), '403 invalid_signature', 'insecure is off unless configured');
  const insecure = imgproxyDialect(config({ MATTE_IMGPROXY_INSECURE: '1' }))!;
  const unsigned = insecure.parse('/insecure/w:300/plain/https://src.example/a.jpg', '', ctx);
  assert.is(unsigned.signed, false);
  assert.is(unsigned.cacheControl, 'public, max-age=3600');
  assert.is(dialect.parse(good, '', ctx).cacheControl, 'public, max-age=31536000, immutable');
  assert.is(imgproxyDialect(loadConfig({})), undefined, 'no key: off');
});

test('imgproxy: Nuxt Image\'s imgproxy provider: signed, and its fits mapped', async () => {
  const nuxt = await provider('imgproxy');
  const dialect = imgproxyDialect(config())!;
  const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
    [{ width: 200, height: 100, fit: 'cover' }, { resize: { width: 200, height: 100, fit: 'crop' } }],
    [{ width: 200, height: 100, fit: 'contain' }, { resize: { width: 200, height: 100, fit: 'pad', enlarge: false } }],
    [{ width: 200, height: 100, fit: 'fill' }, { resize: { width: 200, height: 100, fit: 'fill', enlarge: false } }],
    [{ width: 200, height: 100, fit: 'inside' }, { resize: { width: 200, height: 100, fit: 'scale-down' } }],
    [{ width: 200 }, { resize: { width: 200, fit: 'scale-down' } }],
    [{ height: 120, enlarge: true }, { resize: { height: 120, fit: 'contain' } }],
  ];
  for (const [modifiers, operation] of cases) {
    const url = nuxt.getImage('https://src.example/a.jpg', { modifiers: { ...modifiers, format: 'webp', quality: 70 }, baseURL: 'http://h', key: KEY, salt: SALT }).url;
    const read = dialect.parse(pathOf(url), '', ctx);
    assert.equal(read.operations, [operation], JSON.stringify(modifiers));
    assert.is(read.format, 'webp');
    assert.is(read.quality, 70);
  }
});

test("imgproxy: options in imgproxy's order whatever the URL's, later ones overriding", () => {
  const { options } = readImgproxyPath('/bg:ffffff/pd:10:20/sh:0.5/bl:2/rot:90/g:sm/rs:fill:300:200:1/dpr:2/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw.png', {});
  assert.equal(imgproxyOperations(options), {
    operations: [
      { rotate: 90 },
      { resize: { width: 300, height: 200, fit: 'cover', gravity: 'attention', dpr: 2 } },
      { blur: 4 },
      { sharpen: { sigma: 0.5 } },
      { extend: { top: 20, right: 40, bottom: 20, left: 40, background: '#ffffff' } },
      { background: '#ffffff' },
    ],
    format: 'png',
    quality: undefined,
  });
  const later = readImgproxyPath('/w:100/w:200/f:jpg/g:fp:0.25:0.75/rt:fill-down/h:50/plain/https://src.example/a b.jpg@webp', {});
  assert.is(later.source, 'https://src.example/a b.jpg');
  assert.equal(imgproxyOperations(later.options).operations, [{ resize: { width: 200, height: 50, fit: 'crop', gravity: { x: 0.25, y: 0.75 }, keepBoxAspect: true } }]);
  assert.is(imgproxyOperations(later.options).format, 'webp', 'the extension wins over f');
  assert.equal(imgproxyOperations(readImgproxyPath('/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw', {}).options), { operations: [], format: 'source', quality: undefined });
});

test('imgproxy: presets (MATTE_IMGPROXY_PRESETS), `default` first', () => {
  const { imgproxyPresets } = config({ MATTE_IMGPROXY_PRESETS: 'default=q:60,thumb=rs:fill:64:64/el:1' });
  const { options } = readImgproxyPath('/pr:thumb/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw', imgproxyPresets);
  assert.equal(imgproxyOperations(options), { operations: [{ resize: { width: 64, height: 64, fit: 'cover' } }], format: 'source', quality: 60 });
  assert.is(code(() => readImgproxyPath('/pr:nope/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw', imgproxyPresets)), '404 invalid_url');
});

test('imgproxy: bad URLs are 404 invalid_url', () => {
  const src = '/aHR0cHM6Ly9zcmMuZXhhbXBsZS9hLmpwZw';
  for (const path of ['/nope:1' + src, '/w:abc' + src, '/w:-1' + src, '/q:0' + src, '/rs:stretch:1:1' + src, '/g:nowe:10:5' + src, '/rot:45' + src, '/f:bmp' + src, '/w:100/%%%', '/w:100/plain/', '/w:100/a.b.c', '/el:maybe' + src]) {
    assert.is(code(() => readImgproxyPath(path, {})), '404 invalid_url', path);
  }
});

// ---- Cloudflare ---------------------------------------------------------------------------------

test("Cloudflare: Nuxt Image's cloudflare provider and Next.js's loader's URLs", async () => {
  const nuxt = await provider('cloudflare');
  const dialect = cloudflareDialect(config());
  const url = nuxt.getImage('/uploads/a.jpg', { modifiers: { width: 200, height: 100, fit: 'cover', format: 'webp', quality: 70, gravity: 'auto' }, baseURL: 'http://h' }).url;
  const read = dialect.parse(pathOf(url).slice('/cdn-cgi/image'.length), '', ctx);
  assert.is(read.source, '/uploads/a.jpg');
  assert.equal(read.operations, [{ resize: { width: 200, height: 100, fit: 'cover', gravity: 'subject' } }]);
  assert.is(read.format, 'webp');
  assert.is(read.quality, 70);
  // Next.js's documented loader: width, quality, format=auto.
  const next = dialect.parse('/width=640,quality=75,format=auto/https://src.example/photo.jpg', 'v=2', ctx);
  assert.is(next.source, 'https://src.example/photo.jpg?v=2');
  assert.equal(next.operations, [{ resize: { width: 640, fit: 'scale-down' } }]);
  assert.is(next.format, 'negotiate');
});

test("Cloudflare: its order (trim, flip, rotate, resize, segment, tone, sharpen, blur, background), whatever the URL's", () => {
  const options = readCloudflareOptions('blur=5,background=%23ff0000,sharpen=2,gamma=1.5,segment=foreground,fit=pad,h=100,w=200,rotate=90,flip=h,trim=1;2;3;4,dpr=2,brightness=1.2');
  assert.equal(cloudflareOperations(options).operations, [
    { crop: { top: 1, right: 2, bottom: 3, left: 4 } },
    { flip: 'h' },
    { rotate: 90 },
    { removeBackground: true },
    { resize: { width: 200, height: 100, fit: 'pad', dpr: 2, background: '#ff0000' } },
    { brightness: 1.2 },
    { gamma: 1.5 },
    { sharpen: 2 },
    { blur: 5 },
  ]);
  assert.equal(cloudflareOperations(readCloudflareOptions('width=300,segment=foreground,background=white')).operations, [
    { resize: { width: 300, fit: 'scale-down' } },
    { removeBackground: true },
    { background: 'white' },
  ]);
  assert.equal(cloudflareOperations(readCloudflareOptions('width=300,height=200,fit=crop,gravity=0.1x0.9')).operations, [{ resize: { width: 300, height: 200, fit: 'crop', gravity: { x: 0.1, y: 0.9 } } }]);
  assert.equal(cloudflareOperations(readCloudflareOptions('width=300,height=200,fit=cover,gravity=left,metadata=none,onerror=redirect,anim=false')), { operations: [{ resize: { width: 300, height: 200, fit: 'cover', gravity: 'west' } }], format: 'source', quality: undefined, anim: false });
});

test('Cloudflare: bad options are 400 invalid_options (ERROR 9401)', () => {
  for (const segment of ['', 'width', 'width=0', 'width=abc', 'width=1.5', 'fit=stretch', 'nope=1', 'rotate=45', 'format=json', 'gravity=up', 'trim=1;2', 'segment=background', 'width=1,width=2', 'anim=maybe']) {
    assert.is(code(() => cloudflareOperations(readCloudflareOptions(segment))), '400 invalid_options', segment);
  }
  const answer = cloudflareDialect(config()).answerError(new HttpError(400, 'invalid_options', 'width must be ...'));
  assert.is(answer.status, 400);
  assert.is(answer.headers['Cf-Resized'], 'err=9401');
  assert.is(answer.body, 'ERROR 9401: width must be ...');
});

// ---- IPX ----------------------------------------------------------------------------------------

test("IPX: Nuxt Image's ipx provider's URLs", async () => {
  const nuxt = await provider('ipx');
  const dialect = ipxDialect(config());
  const read = (modifiers: Record<string, unknown>, src = '/uploads/a b.jpg') => {
    const url = nuxt.getImage(src, { modifiers, baseURL: 'http://h/_ipx' }, {}).url;
    return dialect.parse(pathOf(url).slice('/_ipx'.length), '', ctx);
  };
  const cover = read({ width: 200, height: 100, fit: 'cover', format: 'webp', quality: 70, background: '#fff', position: 'top' });
  assert.is(cover.source, '/uploads/a b.jpg');
  assert.equal(cover.operations, [{ resize: { width: 200, height: 100, fit: 'crop', gravity: 'north', keepBoxAspect: true } }]);
  assert.is(cover.format, 'webp');
  assert.is(cover.quality, 70);
  assert.equal(read({ width: 200 }, 'https://src.example/a.jpg').operations, [{ resize: { width: 200, fit: 'scale-down' } }]);
  assert.equal(read({ width: 200, height: 100, fit: 'contain', background: 'ff0000' }).operations, [{ resize: { width: 200, height: 100, fit: 'pad', enlarge: false, background: '#ff0000' } }]);
  assert.equal(read({ width: 200, height: 100, fit: 'fill' }).operations, [{ resize: { width: 200, height: 100, fit: 'fill', enlarge: false, keepBoxAspect: true } }]);
  assert.equal(read({}).operations, []);
  assert.is(read({ format: 'auto' }).format, 'negotiate');
});

test("IPX: sharp's order, and the last resize in IPX's order wins", () => {
  assert.equal(ipxOperations(readIpxModifiers('blur_2,rotate_90,s_100x50,flop,enlarge,sharpen_1_2,grayscale,extend_1_2_3_4,trim_10')).operations, [
    { trim: true },
    { rotate: 90 },
    { flip: 'h' },
    { resize: { width: 100, height: 50, fit: 'cover' } },
    { extend: { top: 1, right: 2, bottom: 3, left: 4, background: '#000000' } },
    { blur: 4 },
    { sharpen: { sigma: 1, flat: 2 } },
    { saturation: 0 },
  ]);
  // w_ and h_ are each a sharp resize: h sorts before w, so w's (one side) is the one applied.
  assert.equal(ipxOperations(readIpxModifiers('w_200&h_100')).operations, [{ resize: { width: 200, fit: 'scale-down' } }]);
  assert.is(ipxOperations(readIpxModifiers('_')).anim, false, 'IPX keeps frames only when asked');
  assert.is(ipxOperations(readIpxModifiers('a,f_webp')).anim, true);
  assert.is(ipxOperations(readIpxModifiers('f_gif')).anim, true);
});

test('IPX: bad modifiers are 400 in IPX\'s JSON form', () => {
  for (const segment of ['w_0', 'w_abc', 's_10y10', 'fit_stretch', 'pos_up', 'q_101', 'rotate_45', 'nope_1', 'f_bmp', 'b_%23zzz', 'extend_1_1_1_1_mirror']) {
    assert.is(code(() => ipxOperations(readIpxModifiers(segment))), '400 invalid_modifier', segment);
  }
  const dialect = ipxDialect(config());
  assert.is(code(() => dialect.parse('//a.jpg', '', ctx)), '400 invalid_modifier', 'no modifiers');
  assert.is(code(() => dialect.parse('/w_10/', '', ctx)), '400 missing_id');
  const answer = dialect.answerError(new HttpError(400, 'invalid_modifier', 'Invalid `width` modifier argument: `0`'));
  assert.equal(answer.body, { error: { message: '[400] [IPX_INVALID_MODIFIER_ARG] Invalid `width` modifier argument: `0`' } });
});

// ---- sources ------------------------------------------------------------------------------------

test('sources: relative under MATTE_SOURCE_BASE, absolute under MATTE_SOURCES, nothing else', () => {
  const c = config();
  assert.is(resolveSource('/uploads/a.jpg', c).href, 'https://shop.example/assets/uploads/a.jpg');
  assert.is(resolveSource('https://src.example/x/y.png?v=1', c).href, 'https://src.example/x/y.png?v=1');
  assert.is(resolveSource('https:/src.example/y.png', c).href, 'https://src.example/y.png', 'a merged // repaired');
  assert.is(code(() => resolveSource('https://evil.example/y.png', c)), '403 source_forbidden');
  assert.is(code(() => resolveSource('https://src.example.evil.example/y.png', c)), '403 source_forbidden');
  assert.is(code(() => resolveSource('https://src.example@evil.example/y.png', c)), '400 invalid_source');
  assert.is(code(() => resolveSource('/../../secret', c)), '403 source_forbidden');
  assert.is(code(() => resolveSource('\\\\evil.example/a.png', c)), '403 source_forbidden');
  assert.is(code(() => resolveSource('file:///etc/passwd', c)), '400 invalid_source');
  assert.is(code(() => resolveSource('/a.jpg', loadConfig({ MATTE_SOURCES: 'https://src.example/' }))), '403 source_forbidden', 'no base: no relative source');
  assert.is(resolveSource('https://any.example/a.jpg', loadConfig({}), true).href, 'https://any.example/a.jpg', 'signed, no MATTE_SOURCES: any');
  assert.is(code(() => resolveSource('https://any.example/a.jpg', c, true)), '403 source_forbidden', 'signed, MATTE_SOURCES set: it holds');
});

test.run();
