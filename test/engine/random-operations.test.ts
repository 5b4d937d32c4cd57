// run-tests: parallel
// Property: whatever operation JSON a caller passes, the library answers with a result or a
// MatteError (never a TypeError or another untyped error), and never `internal`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { edit, MatteError } from '../../lib/index.js';
import { operationList } from '../helpers/random-operations.js';
import { gradient } from '../helpers/images.js';

const image = gradient(24, 16);

test('random operation lists: a result or a typed MatteError, never internal (seeded, 300 runs)', async () => {
  await fc.assert(
    fc.asyncProperty(operationList, async (operations) => {
      try {
        // removeBackground needs the model; it is exercised by the server's property test.
        const ops = Array.isArray(operations) ? operations.filter((o) => !(o && typeof o === 'object' && 'removeBackground' in o)) : operations;
        const out = await edit(image, ops, { limits: { maxPixels: 1_000_000 } });
        assert.ok(out.width >= 1 && out.height >= 1);
      } catch (err) {
        if (!(err instanceof MatteError)) throw new Error(`untyped error for ${JSON.stringify(operations)}: ${err}`);
        if (err.code === 'internal') throw new Error(`internal for ${JSON.stringify(operations)}: ${err.message}`);
      }
    }),
    { seed: 20261123, numRuns: 300 },
  );
});

test.run();
