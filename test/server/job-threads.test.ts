// run-tests: parallel
// MATTE_JOB_THREADS (docs/api.md, "Capacity and shutdown"; docs/configuration.md): a cap on one job's
// threads, for hosts that keep cores for other work. With 1 every job gets one thread whatever
// else runs: libvips' workers and ONNX Runtime's shared pool (sized before the first model loads,
// so this suite's process must not have loaded one before the server starts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { removeBackground } from '../../lib/index.js';
import { addon } from '../../lib/native.js';
import { disc } from '../helpers/images.js';
import { post, startTestServer, type TestServer } from '../helpers/server.js';

const counters = (addon as unknown as { counters: () => { onnxPoolThreads: number; vipsThreads: number; inferencesPooled: number } }).counters;
const input = disc(160, 120, 40, [200, 30, 30], [255, 255, 255], { alpha: false });

let server: TestServer;
test.before(async () => {
  assert.is(counters().onnxPoolThreads, 0, 'a model was loaded before the server started');
  server = await startTestServer({ MATTE_JOB_THREADS: '1' });
});
test.after(async () => {
  await server.close();
});

test('MATTE_JOB_THREADS=1: libvips and ONNX Runtime give a job one thread, even alone; the matte is the same', async () => {
  assert.is(counters().vipsThreads, 1, 'libvips workers with no job running');
  const r = await post(server.url, '/images/remove-background', { input, output: 'raw', format: 'png' });
  assert.is(r.status, 200, r.body.toString('utf8'));
  assert.is(counters().onnxPoolThreads, 1, "ONNX Runtime's pool");
  assert.is(counters().vipsThreads, 1, 'libvips workers after the job');
  // The same result as the library gives under the same cap (the matte does not depend on threads:
  // test/matte/inference-threads.test.ts, refine-threads.test.ts).
  const direct = await removeBackground(input, { format: 'png' });
  assert.ok(r.body.equals(direct.data), 'the server and the library differ');
});

test.run();
