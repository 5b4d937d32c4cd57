// Corrupt inputs of every accepted type (deterministic byte flips and cuts): each job either
// succeeds or fails with a typed 4xx-class code; the process never crashes and never hangs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { random } from '../helpers/random.js';
import { convert, gradient, makeGif, makeTiff } from '../helpers/images.js';

// SEED and N (inputs per type) widen the search locally, e.g.
// `SEED=7 N=500 node dist/test/engine/corrupt.test.js`; the PRNG is seeded, so a failure can be reproduced.

const TYPED = new Set(['unsupported_image', 'image_too_large', 'invalid_operations']);

test('byte flips and cuts in jpeg, png, webp, gif, avif and tiff inputs', async () => {
  const source = gradient(96, 64);
  const originals: Record<string, Buffer> = {
    png: source,
    jpeg: await convert(source, 'jpeg'),
    webp: await convert(source, 'webp'),
    gif: makeGif(32, 16, [[255, 0, 0], [0, 255, 0], [0, 0, 255]]),
    avif: await convert(source, 'avif'),
    tiff: makeTiff(32, 32, [10, 20, 30]),
  };
  const next = random(Number(process.env.SEED ?? 1234));
  let succeeded = 0;
  let refused = 0;
  for (const [type, original] of Object.entries(originals)) {
    for (let i = 0; i < Number(process.env.N ?? 30); i++) {
      const mutated = Buffer.from(original);
      const flips = 1 + Math.floor(next() * 8);
      for (let f = 0; f < flips; f++) {
        // Keep the magic bytes most of the time so the decoder, not the sniffer, meets the damage.
        const at = 8 + Math.floor(next() * (mutated.length - 8));
        mutated[at] = Math.floor(next() * 256);
      }
      const input = next() < 0.3 ? mutated.subarray(0, Math.floor(next() * mutated.length)) : mutated;
      try {
        await edit(input, [{ resize: { width: 20 } }, { rotate: 90 }], { format: type === 'gif' ? 'gif' : 'png' });
        succeeded++;
      } catch (err: any) {
        assert.ok(TYPED.has(err.code), `${type} #${i}: ${err.code} ${err.message}`);
        refused++;
      }
    }
  }
  assert.is(succeeded + refused, 6 * Number(process.env.N ?? 30));
  assert.ok(refused > 0, 'some inputs are refused');
});

test.run();
