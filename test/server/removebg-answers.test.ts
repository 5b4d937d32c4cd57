// run-tests: alone (it times the zip answer against the job budget)
// The remove.bg route's answers and its job budget under attack (issue 41, findings 3 and 4),
// through real HTTP on loopback:
// - clients that never read their answers: a JSON answer (Accept: application/json, the image in
//   base64) keeps its admission until it is sent, as an image answer does, so with one slot and
//   a queue of one the third such client is refused (429), not given the tenth answer held in
//   memory (before the fix: ten 200s of 22 MB each, 432 -> 1161 MiB);
// - format=zip runs three times (the cut-out, its colour, its alpha) within one job budget, not
//   three (before the fix: a 3 s budget answered 200 after 4 s).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import net from 'node:net';
import { edit } from '../../lib/index.js';
import { disc, makePng } from '../helpers/images.js';
import { random } from '../helpers/random.js';
import { startTestServer, TEST_KEY, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Sends one request on a socket of its own and reads only the answer's status line; the rest of
 * the answer is left unread (the socket is paused) until release() destroys the socket.
 */
function nonReader(port: number, head: string, body: Buffer): Promise<{ status: number; release(): void }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const release = () => socket.destroy();
    socket.on('data', (d) => {
      text += d.toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      if (status === undefined) return;
      socket.pause();
      socket.removeAllListeners('data');
      resolve({ status: Number(status), release });
    });
    socket.on('error', (err) => {
      if (!text) reject(err);
    });
    socket.write(head);
    socket.write(body);
  });
}

const jsonRequest = (port: number, body: Buffer, accept: string) =>
  `POST /v1.0/removebg HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: application/json\r\nAccept: ${accept}\r\nContent-Length: ${body.length}\r\n\r\n`;

test('ten clients that never read a 20 MB JSON answer, one slot and a queue of one: two answered, the rest refused 429 until those are sent', async () => {
  const server = await startTestServer({ MATTE_CONCURRENCY: '1', MATTE_QUEUE_LIMIT: '1', MATTE_IDLE_TIMEOUT_SECONDS: '120' });
  const readers: Array<{ status: number; release(): void }> = [];
  try {
    // A disc of noise on white: the cut-out keeps the noise, which does not compress, over a
    // white background: a PNG answer of about 15 MB, 20 MB as JSON, more than sockets buffer.
    const next = random(41);
    const noise = makePng(2600, 2600, (x, y) => ((x - 1300) ** 2 + (y - 1300) ** 2 < 1250 ** 2 ? [Math.floor(next() * 256), Math.floor(next() * 256), Math.floor(next() * 256)] : [255, 255, 255]));
    const body = Buffer.from(JSON.stringify({ image_file_b64: noise.toString('base64'), size: 'full', format: 'png', bg_color: 'fff' }));
    for (const accept of ['application/json', 'image/png']) {
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        const reader = await nonReader(server.port, jsonRequest(server.port, body, accept), body);
        readers.push(reader);
        statuses.push(reader.status);
      }
      assert.equal(statuses, [200, 200, 429, 429, 429, 429, 429, 429, 429, 429], `${accept}: ${statuses}`);
      for (const reader of readers.splice(0)) reader.release();
      // Once the unread answers' connections are gone, their admissions are free again.
      await waitFor('the admissions to be released', () => server.running.services.limiter.stats.admitted === 0);
    }
  } finally {
    for (const reader of readers) reader.release();
    await server.close();
  }
});

test('format=zip: the cut-out, its colour and its alpha within one job budget, answered by its end (200, or job_timeout)', async () => {
  const server = await startTestServer({ MATTE_MAX_INPUT_PIXELS: '100000000', MATTE_JOB_TIMEOUT_SECONDS: '120' });
  try {
    const small = disc(400, 300, 100, [220, 30, 30], [250, 250, 240], { alpha: false });
    const photo = (await edit(small, [{ resize: { width: 6000, height: 4500 } }], { format: 'jpeg', quality: 90 })).data; // 27 MP
    const request = async (format: string) => {
      const started = performance.now();
      const res = await fetch(`${server.url}/v1.0/removebg`, {
        method: 'POST',
        headers: { 'X-Api-Key': TEST_KEY, 'Content-Type': 'application/json' },
        body: JSON.stringify({ image_file_b64: photo.toString('base64'), size: 'full', format }),
      });
      const body = Buffer.from(await res.arrayBuffer());
      return { status: res.status, body, ms: performance.now() - started };
    };
    // The cut-out alone, twice (the second with the matte cached, as the zip's first run will be).
    assert.is((await request('png')).status, 200);
    const png = await request('png');
    assert.is(png.status, 200);
    // A budget the cut-out fits in and the zip's two further runs overrun: before the fix each of
    // the three runs had the whole budget, and the zip was answered 200 well past it.
    const budgetMs = Math.round(png.ms * 1.15);
    server.config.jobTimeoutMs = budgetMs;
    const zip = await request('zip');
    const detail = zip.status === 200 ? 'a zip' : zip.body.toString();
    assert.ok(zip.ms <= budgetMs + 500 + budgetMs * 0.1, `answered (${detail}) after ${zip.ms.toFixed(0)} ms with a budget of ${budgetMs} ms`);
    if (zip.status !== 200) {
      assert.is(zip.status, 400, detail);
      const error = JSON.parse(detail).errors[0];
      assert.is(error.code, 'job_timeout');
      assert.is(error.detail, `the job took longer than ${budgetMs / 1000} s and was stopped`);
    }
  } finally {
    await server.close();
  }
});

test.run();
