// run-tests: parallel
// The server's V8 heap growing factor (server/heap-growth.ts): set unless node was given one, and a
// server started with node's own flag still starts and answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HEAP_GROWING_PERCENT, heapGrowingFlag } from '../../server/heap-growth.js';
import { spawnServer, tempDir, TEST_KEY } from '../helpers/server.js';

test('the server sets a growing factor of its own when node was given none', () => {
  assert.is(heapGrowingFlag([]), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  assert.is(heapGrowingFlag(['--enable-source-maps', '--max-old-space-size=512']), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  assert.is(heapGrowingFlag(['--heap-growing-percentage=3']), `--heap-growing-percent=${HEAP_GROWING_PERCENT}`, 'another flag whose name starts the same');
});

test("node's own --heap-growing-percent wins, in either spelling", () => {
  assert.is(heapGrowingFlag(['--heap-growing-percent=50']), undefined);
  assert.is(heapGrowingFlag(['--heap_growing_percent=0']), undefined);
});

test('a server started with node --heap-growing-percent answers', async () => {
  const server = await spawnServer({ MATTE_API_KEYS: TEST_KEY, MATTE_RESULTS_DIR: await tempDir('matte-results-') }, { nodeArgs: ['--heap-growing-percent=50'] });
  try {
    const reply = await fetch(`${server.url}/healthz`);
    assert.is(reply.status, 200, server.output());
  } finally {
    assert.is(await server.stop(), 0, server.output());
  }
});

test.run();
