// Many short jobs at once whose steps compile ORC programs in libvips 8.14 (blur: convi; resize:
// reducev), so that the programs are created and freed on several threads at the same time. Not
// part of the suite; run it directly (UV_THREADPOOL_SIZE sets how many jobs really run at once):
//   UV_THREADPOOL_SIZE=8 JOBS=20000 node dist/test/stress/orc-race-stress.js
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { addon, type NativePlan } from '../../lib/native.js';
import { parseOperations } from '../../lib/schema.js';
import { gradient } from '../helpers/images.js';

const JOBS = Number(process.env.JOBS ?? 5000);
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 32);
const input = gradient(24, 16);
const plans = [[{ blur: 1 }], [{ blur: 1 }, { resize: { width: 8 } }], [{ resize: { width: 10 } }]].map(parseOperations);

function plan(i: number): NativePlan {
  return { steps: plans[i % plans.length]!, format: 'png', quality: 90, anim: false, maxPixels: 1e8, maxFrames: 100, maxMatteFrames: 10 };
}

test(`${JOBS} short jobs, ${IN_FLIGHT} in flight`, async () => {
  let done = 0;
  let next = 0;
  async function lane() {
    while (next < JOBS) {
      const i = next++;
      const out = await addon.run(input, plan(i), undefined);
      assert.ok(out.data.length > 0);
      done++;
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  assert.is(done, JOBS);
});

test.run();
