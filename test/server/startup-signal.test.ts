// run-tests: parallel
// SIGTERM while the server is still starting (listening, the model still loading) finishes the
// requests already being served instead of killing them. The model load is held open by a FIFO in
// place of the model file: the start cannot finish until the test writes to it, which it never does.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rm, writeFile } from 'node:fs/promises';
import { gradient } from '../helpers/images.js';
import { serverProcessEnv, sleep, statusOf, tempDir, TEST_KEY } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

test('SIGTERM during start-up: a request already being served still gets its answer, then the server exits 0', async () => {
  const models = await tempDir('matte-models-');
  const results = await tempDir('matte-results-');
  execFileSync('mkfifo', [join(models, 'u2netp.onnx')]);
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'dist/server/main.js')], {
    cwd: root,
    env: serverProcessEnv({ PORT: String(port), HOST: '127.0.0.1', MATTE_API_KEYS: TEST_KEY, MATTE_MODELS_DIR: models, MATTE_RESULTS_DIR: results, MATTE_CONCURRENCY: '1', MATTE_LOG_LEVEL: 'warn', MATTE_METRICS_ADDRESS: 'off' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  try {
    // Wait until it accepts connections (it listens before the model loads).
    const socket = await waitFor(
      () => `the server to listen:\n${output}`,
      () =>
        new Promise<net.Socket | undefined>((resolve) => {
          const s = net.connect(port, '127.0.0.1');
          s.once('connect', () => resolve(s));
          s.once('error', () => resolve(undefined));
        }),
    );
    assert.ok(socket, `the server never listened:\n${output}`);
    assert.not.match(output, /listening on/, 'the start finished: the test does not exercise the start-up window');

    const png = gradient(32, 32);
    const boundary = 'xyz';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[{"flip":"h"}]\r\n--${boundary}\r\nContent-Disposition: form-data; name="output"\r\n\r\nraw\r\n--${boundary}\r\nContent-Disposition: form-data; name="input"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`),
      png,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    let text = '';
    socket!.on('data', (d) => (text += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket!.on('close', () => r()));
    socket!.write(`POST /images/edit HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Api-Key: ${TEST_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${body.length}\r\n\r\n`);
    socket!.write(body.subarray(0, 100));
    await sleep(300); // the request is being served: its body is half-way
    child.kill('SIGTERM');
    await sleep(300);
    socket!.write(body.subarray(100));
    await Promise.race([closed, sleep(10_000)]);
    assert.is(statusOf(text), 200, `${text.slice(0, 300)}\n${output}`);
    // Let the blocked model read end (libuv joins its threads at exit; one waits in the FIFO's open).
    await writeFile(join(models, 'u2netp.onnx'), 'not a model');
    assert.is(await Promise.race([exited, sleep(10_000).then(() => 'still running')]), 0, output);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(models, { recursive: true, force: true });
    await rm(results, { recursive: true, force: true });
  }
});

test.run();
