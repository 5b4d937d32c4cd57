// run-tests: alone (it measures /healthz latency and the peak memory of the server under attack)
// Hostile bodies on the remove.bg routes (issue 41, findings 1 and 2), against the server as a
// process (node dist/server/main.js) at the default limits, each named after its attack and
// measured as the attacker would: the server's peak memory (VmHWM since a mark), the longest
// /healthz answer while the attack runs, the status, its code and when it came, and the body
// bytes the server took before it answered. Before the fix a 44.7 MB `{"tag":[{},{},...]}` took
// 1.4 GB and stalled the event loop for 7.7 s; the bounds asserted here are loose against this
// shared machine's noise and tight against that. MATTE_TEST_FIGURES=1 prints each attack's figures.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import { FORM_OVERHEAD_BYTES } from '../../server/input/form.js';
import { markPeak, memoryOf, repeated, streamBody, watchHealth, type Streamed } from '../helpers/attack.js';
import { disc } from '../helpers/images.js';
import { spawnServer, tempDir, TEST_KEY, type ChildServer } from '../helpers/server.js';

const MIB = 1024 * 1024;
/** The server's defaults: MATTE_MAX_INPUT_BYTES and the bound of a whole body. */
const MAX_INPUT = 25 * MIB;
const BODY_BOUND = MAX_INPUT + FORM_OVERHEAD_BYTES;
/** A hostile body as large as a body may be. */
const LARGE = BODY_BOUND;
/**
 * The longest /healthz answer allowed while an attack runs (before the fix: 7.7 s). The server
 * works a piece of a body at a time; what remains here is this shared machine's scheduling.
 */
const HEALTH_MS = 2000;

/** Where a body refused as met stops until the answer: the faults all begin in its first bytes. */
const HOLD = 1 * MIB;
/**
 * A bound on the server's peak memory in MiB. In the ASan pass the server's allocator holds what
 * it frees (ASan's quarantine) instead of reusing it, so the peak also counts the copies a body
 * already dropped: the bound is looser there by that much, still far below what the attacks took.
 */
const peakBound = (mib: number) => mib + (process.env.MATTE_SANITIZER_LOG_DIR ? 64 : 0);

let dir: string;
let server: ChildServer;
let pid: number;

test.before(async () => {
  dir = await tempDir('matte-hostile-bodies-');
  server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: dir, MATTE_LOG_LEVEL: 'error' });
  pid = server.child.pid!;
  // Warm: the first requests load code paths and grow the heap once, not the attack.
  for (let i = 0; i < 3; i++) await post('/v1.0/improve', 'application/json', Buffer.from('{"tag":"warm"}'));
});
test.after(async () => {
  await server.stop('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

async function post(path: string, type: string, body: Buffer): Promise<{ status: number; json: any }> {
  const res = await fetch(server.url + path, { method: 'POST', headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': type }, body: new Uint8Array(body) });
  return { status: res.status, json: await res.json() };
}

const headers = (type: string) => ({ 'X-Api-Key': TEST_KEY, 'Content-Type': type });

/** Runs `attack` `times` at once while /healthz is polled; what it cost the server. */
async function underAttack(times: number, attack: () => Promise<Streamed>): Promise<{ replies: Streamed[]; healthMs: number; peakMiB: number; baseMiB: number }> {
  const base = memoryOf(pid).rssMiB;
  markPeak(pid);
  const health = watchHealth(server.url);
  const replies = await Promise.all(Array.from({ length: times }, attack));
  const { maxMs } = await health.stop();
  if (process.env.MATTE_TEST_FIGURES) console.log(`  ${times} at once: statuses ${replies.map((r) => r.status)}, answered after ${replies.map((r) => r.answeredMs.toFixed(0))} ms, read ${replies.map((r) => r.bytesBeforeAnswer)} bytes, /healthz at most ${maxMs.toFixed(0)} ms, peak +${(memoryOf(pid).peakMiB - base).toFixed(0)} MiB over ${base.toFixed(0)} MiB`);
  return { replies, healthMs: maxMs, peakMiB: memoryOf(pid).peakMiB - base, baseMiB: base };
}

function assertRefused(reply: Streamed, code: string): void {
  assert.is(reply.status, 400, reply.body.toString().slice(0, 300));
  assert.is(reply.json().errors[0].code, code, reply.body.toString());
}

test('{"tag":[{},{},...]} as large as a body may be, three at once on /v1.0/improve: refused at the first "[", no memory, no stall', async () => {
  const { replies, healthMs, peakMiB } = await underAttack(3, () => streamBody(`${server.url}/v1.0/improve`, headers('application/json'), LARGE, repeated('{"tag":[', '{},', LARGE), { holdAfter: HOLD }));
  for (const reply of replies) {
    assertRefused(reply, 'invalid_parameter');
    assert.match(reply.json().errors[0].detail, /tag must be a string, a number or a boolean/);
    assert.ok(reply.bytesBeforeAnswer <= HOLD, `answered after ${reply.bytesBeforeAnswer} bytes`);
  }
  assert.ok(healthMs < HEALTH_MS, `/healthz took ${healthMs.toFixed(0)} ms during the attack`);
  assert.ok(peakMiB < peakBound(64), `peak memory grew by ${peakMiB.toFixed(0)} MiB`);
});

test('the same on /v1.0/removebg, and url-encoded a&a&a...: refused at the first unknown name', async () => {
  const json = await underAttack(2, () => streamBody(`${server.url}/v1.0/removebg`, headers('application/json'), LARGE, repeated('{"size":"full","crop":[', '{},', LARGE)));
  for (const reply of json.replies) assertRefused(reply, 'invalid_parameter');
  const form = await underAttack(2, () => streamBody(`${server.url}/v1.0/removebg`, headers('application/x-www-form-urlencoded'), LARGE, repeated('a', '&a', LARGE)));
  for (const reply of form.replies) {
    assertRefused(reply, 'unknown_parameter');
    assert.match(reply.json().errors[0].detail, /unknown parameter "a"/);
  }
  for (const { healthMs, peakMiB } of [json, form]) {
    assert.ok(healthMs < HEALTH_MS, `/healthz took ${healthMs.toFixed(0)} ms`);
    assert.ok(peakMiB < peakBound(64), `peak memory grew by ${peakMiB.toFixed(0)} MiB`);
  }
});

test('repeated, surplus and long fields: a duplicate key, a 25 MiB text field, a 25 MiB number, a 25 MiB name: each refused as met', async () => {
  const cases: Array<[string, string, (offset: number) => Buffer, string, RegExp]> = [
    ['application/json', 'duplicate keys', repeated('{"tag":"a"', ',"tag":"a"', LARGE), 'invalid_parameter', /tag is given more than once/],
    ['application/x-www-form-urlencoded', 'duplicate names', repeated('tag=a', '&tag=a', LARGE), 'invalid_parameter', /tag is given more than once/],
    ['application/json', 'a long text field', repeated('{"tag":"', 'x', LARGE), 'invalid_parameter', /tag is longer than 65536 bytes/],
    ['application/x-www-form-urlencoded', 'a long text field', repeated('tag=', '%41', LARGE), 'invalid_parameter', /tag is longer than 65536 bytes/],
    ['application/json', 'a long number', repeated('{"tag":1', '0', LARGE), 'invalid_parameter', /tag is longer than 65536 bytes/],
    ['application/json', 'a long name', repeated('{"', 'x', LARGE), 'unknown_parameter', /unknown parameter "x+\.\.\."/],
    ['application/x-www-form-urlencoded', 'a long name', repeated('', 'x', LARGE), 'unknown_parameter', /unknown parameter "x+\.\.\."/],
    ['application/json', 'image_file as text', repeated('{"image_file":"', 'A', LARGE), 'invalid_parameter', /image_file must be a file part/],
  ];
  for (const [type, what, body, code, detail] of cases) {
    const { replies, healthMs, peakMiB } = await underAttack(1, () => streamBody(`${server.url}/v1.0/improve`, headers(type), LARGE, body, { holdAfter: HOLD }));
    assertRefused(replies[0]!, code);
    assert.match(replies[0]!.json().errors[0].detail, detail, `${type} ${what}`);
    assert.ok(replies[0]!.bytesBeforeAnswer <= HOLD, `${type} ${what}: answered after ${replies[0]!.bytesBeforeAnswer} bytes`);
    assert.ok(healthMs < HEALTH_MS, `${type} ${what}: /healthz took ${healthMs.toFixed(0)} ms`);
    assert.ok(peakMiB < peakBound(64), `${type} ${what}: peak memory grew by ${peakMiB.toFixed(0)} MiB`);
  }
});

test('multipart: a 25 MiB text field that is not image_file_b64 is refused (multer holds a field whole: at most a few times the body)', async () => {
  const boundary = 'hostile-boundary';
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="tag"\r\n\r\n`;
  const tail = `\r\n--${boundary}--\r\n`;
  const { replies, healthMs, peakMiB } = await underAttack(1, () => streamBody(`${server.url}/v1.0/improve`, headers(`multipart/form-data; boundary=${boundary}`), LARGE, repeated(head, 'x', LARGE, tail)));
  assertRefused(replies[0]!, 'invalid_parameter');
  assert.match(replies[0]!.json().errors[0].detail, /tag is longer than 65536 bytes/);
  assert.ok(healthMs < HEALTH_MS, `/healthz took ${healthMs.toFixed(0)} ms`);
  assert.ok(peakMiB < peakBound((4 * LARGE) / MIB), `peak memory grew by ${peakMiB.toFixed(0)} MiB`);
});

test('a body that must be read whole (whitespace, or base64 that is not an image): linear, at most twice its size in memory, no stall', async () => {
  const blank = await underAttack(2, () => streamBody(`${server.url}/v1.0/improve`, headers('application/json'), LARGE, repeated('{', ' ', LARGE, '}')));
  for (const reply of blank.replies) assertRefused(reply, 'missing_source');
  // The largest base64 a body may carry, three quarters of it decoded: an image of zeros, not one matte reads.
  const head = '{"image_file_b64":"';
  const total = head.length + 4 * Math.floor((LARGE - head.length - 2) / 4) + 2;
  const b64 = await underAttack(2, () => streamBody(`${server.url}/v1.0/removebg`, headers('application/json'), total, repeated(head, 'AAAA', total, '"}')));
  for (const reply of b64.replies) assertRefused(reply, 'failed_to_read_image');
  for (const [what, { healthMs, peakMiB }] of [['whitespace', blank], ['base64', b64]] as const) {
    assert.ok(healthMs < HEALTH_MS, `${what}: /healthz took ${healthMs.toFixed(0)} ms`);
    assert.ok(peakMiB < peakBound((2 * 2 * LARGE) / MIB), `${what}: peak memory grew by ${peakMiB.toFixed(0)} MiB for two bodies of ${(LARGE / MIB).toFixed(0)} MiB`);
  }
});

/** Sends only the request's headers and waits for the answer: the body bytes read are none. */
function headersOnly(path: string, type: string, contentLength: number): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const socket = net.connect(Number(url.port), url.hostname);
    let text = '';
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (text.includes('\r\n\r\n') && /Content-Length: (\d+)/i.test(text)) {
        const length = Number(/Content-Length: (\d+)/i.exec(text)![1]);
        if (Buffer.byteLength(text.slice(text.indexOf('\r\n\r\n') + 4), 'latin1') >= length) {
          socket.destroy();
          resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), text });
        }
      }
    });
    socket.on('error', reject);
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${url.host}\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: ${type}\r\nContent-Length: ${contentLength}\r\n\r\n`);
  });
}

test('two 25 MiB files in one form, or a 25 MiB image in base64: refused from Content-Length before a byte of the body is read', async () => {
  for (const [type, length] of [
    ['multipart/form-data; boundary=x', 2 * MAX_INPUT + 1000],
    ['application/json', Math.ceil(MAX_INPUT / 3) * 4 + 100],
    ['application/x-www-form-urlencoded', BODY_BOUND + 1],
  ] as const) {
    const { status, text } = await headersOnly('/v1.0/removebg', type, length);
    assert.is(status, 400, text);
    assert.match(text, /"code":"file_too_large"/);
    assert.match(text, /Connection: close/i);
  }
});

test('without Content-Length, a body past the bound is refused at the bound', async () => {
  const reply = await streamBody(`${server.url}/v1.0/removebg`, headers('application/json'), 2 * BODY_BOUND, repeated('{"image_file_b64":"', 'AAAA', 2 * BODY_BOUND, '"}'), { declare: false, holdAfter: BODY_BOUND + HOLD });
  assertRefused(reply, 'file_too_large');
  assert.ok(reply.bytesBeforeAnswer <= BODY_BOUND + HOLD, `answered after ${reply.bytesBeforeAnswer} bytes`);
});

test('a valid image in base64 still works in each body: the bound is the body, within it the image decodes as it arrives', async () => {
  const image = disc(120, 90, 30, [220, 30, 30], [255, 255, 255], { alpha: false });
  const b64 = image.toString('base64');
  const json = await post('/v1.0/improve', 'application/json', Buffer.from(JSON.stringify({ image_file_b64: `data:image/png;base64,${b64.replace(/(.{76})/g, '$1\n')}`, tag: 'ok' })));
  assert.is(json.status, 200, JSON.stringify(json.json));
  const form = await post('/v1.0/improve', 'application/x-www-form-urlencoded', Buffer.from(new URLSearchParams({ image_file_b64: b64 }).toString()));
  assert.is(form.status, 200, JSON.stringify(form.json));
});

test.run();
