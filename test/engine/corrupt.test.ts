// run-tests: parallel
// Corrupt inputs of every accepted type (deterministic byte flips and cuts): each job either
// succeeds or fails with a typed 4xx-class code; the process never crashes and never hangs. A
// failure whose libvips text names no decoder matte knows (libtiff's codecs: "ZIPDecode: ...") is
// classified by decoding the input again (native/pipeline.cc, classify), under the job's budget.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit, MatteError, type EditOptions } from '../../lib/index.js';
import { tiledTiff } from '../helpers/declared-small.js';
import { encodeHeic } from '../helpers/heic.js';
import { random } from '../helpers/random.js';
import { convert, gradient, makeGif, makeTiff } from '../helpers/images.js';

// SEED and N (inputs per type) widen the search locally, e.g.
// `SEED=7 N=500 node dist/test/engine/corrupt.test.js`; the PRNG is seeded, so a failure can be reproduced.

const TYPED = new Set(['unsupported_image', 'image_too_large', 'invalid_operations']);

test('byte flips and cuts in jpeg, png, webp, gif, avif, heic and tiff inputs', async () => {
  const source = gradient(96, 64);
  const originals: Record<string, Buffer> = {
    png: source,
    jpeg: await convert(source, 'jpeg'),
    webp: await convert(source, 'webp'),
    gif: makeGif(32, 16, [[255, 0, 0], [0, 255, 0], [0, 0, 255]]),
    avif: await convert(source, 'avif'),
    heic: encodeHeic(source),
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
  assert.is(succeeded + refused, Object.keys(originals).length * Number(process.env.N ?? 30));
  assert.ok(refused > 0, 'some inputs are refused');
});

/** The job's error; fails the test when the job succeeds. */
async function failure(input: Buffer, operations: Parameters<typeof edit>[1], options: EditOptions = {}): Promise<MatteError> {
  try {
    await edit(input, operations, options);
  } catch (err) {
    assert.instance(err, MatteError, String(err));
    return err as MatteError;
  }
  throw new Error('the image was accepted');
}

test('a TIFF tile whose deflate stream is broken is unsupported_image (the failure names only ZIPDecode)', async () => {
  const broken = tiledTiff({ width: 64, height: 64, tileWidth: 64, tileHeight: 64, brokenTiles: 1 });
  const err = await failure(broken, [{ flip: 'h' }]);
  assert.is(err.code, 'unsupported_image', err.message);
  assert.is(err.message, 'the tiff image cannot be decoded: its data is corrupt or truncated');
});

test('the second decode of a failed job stops at the job\'s budget', async () => {
  // 9728x9728 CMYK with its bottom row of tiles broken. Flipped upside down, the job asks for those
  // tiles first and fails at once; decoding the input again (to sRGB, top to bottom) would take
  // seconds before it met them (about 10 s on 2 cores), so the budget stops it.
  const side = 9728;
  const tiff = tiledTiff({ width: side, height: side, tileWidth: 512, tileHeight: 512, samples: 4, cmyk: true, brokenTiles: side / 512 });
  const err = await failure(tiff, [{ flip: 'v' }], { format: 'png', timeout: 0.5 });
  assert.is(err.code, 'job_timeout', err.message);
});

test.run();
