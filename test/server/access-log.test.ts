// The access log never holds a result's id (the id is the download capability): result paths are
// logged with a short prefix of the id only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startServer } from '../../server/app.js';
import { loadConfig } from '../../server/config.js';
import { gradient } from '../helpers/images.js';
import { get, post, tempDir } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

let logged = '';
const sink = new Writable({
  write(chunk, _encoding, done) {
    logged += chunk.toString();
    done();
  },
});
const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', MATTE_API_KEYS: 'test-key-0123456789abcdef', MATTE_RESULTS_DIR: await tempDir('matte-results-') });
const running = await startServer({ config, logger: pino({ level: 'info' }, sink) });
const base = running.url;

test('a stored result is downloaded; no log line holds its id', async () => {
  const r = await post(base, '/images/edit', { input: gradient(16, 16), operations: '[{"flip":"h"}]' });
  assert.is(r.status, 200);
  const { id, url } = r.json() as { id: string; url: string };
  assert.is((await get(base, new URL(url).pathname)).status, 200);
  assert.is((await get(base, `/images/results/${id}.webp`)).status, 404);
  await waitFor('the access log lines of both downloads', () => logged.split('"path":"/images/results/').length - 1 >= 2);
  assert.match(logged, /"path":"\/images\/results\//);
  assert.not.ok(logged.includes(id), 'the id is in the log');
  assert.not.ok(logged.includes(id.slice(0, 12)), 'half of the id is in the log');
  assert.ok(logged.includes(`/images/results/${id.slice(0, 6)}`), 'a short prefix identifies the result');
});

test.after(() => running.close());
test.run();
