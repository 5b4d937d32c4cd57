// A heavier test/engine/error-isolation, to hunt the crash seen once under ASan (issue 11): corrupt
// and truncated inputs of every accepted type, cut at many places, with good jobs between them, at
// a high concurrency and into every output format. Not part of the suite (no `.test` in its name);
// run it directly or in a loop (scripts/stress-error-isolation.sh):
//   node dist/test/stress/error-isolation-stress.js
//   ROUNDS=40 CONCURRENCY=8 SEED=3 node dist/test/stress/error-isolation-stress.js
// Every job must succeed or fail with a typed 4xx-class code; the process must not die.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, MatteError } from '../../lib/index.js';
import { random } from '../helpers/random.js';
import { convert, gradient, makeGif, makeTiff, withExifOrientation } from '../helpers/images.js';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 8);
const JOBS = Number(process.env.JOBS ?? 48); // per round, all started at once
// In a loop, each run its own seed (scripts/stress-error-isolation.sh sets MATTE_STRESS_RUN).
const SEED = Number(process.env.SEED ?? process.env.MATTE_STRESS_RUN ?? 1);

configure({ concurrency: CONCURRENCY });

const next = random(SEED);

// The suite's corruption: every byte from `keep` on overwritten, the last 16 left.
function corrupt(image: Buffer, keep: number): Buffer {
  const out = Buffer.from(image);
  for (let i = keep; i < out.length - 16; i++) out[i] = (i * 151) & 0xff;
  return out;
}

type Case = { name: string; input: Buffer };
const small = gradient(300, 200);
// Big enough that the PNG encoder deflates several stripes on threads of its own.
const large = gradient(1400, 900);
const sources: Record<string, Buffer> = {
  'png-small': small,
  'png-large': large,
  'jpeg-small': await convert(small, 'jpeg'),
  'jpeg-large': await convert(large, 'jpeg'),
  'jpeg-exif': withExifOrientation(await convert(small, 'jpeg'), 6),
  'webp-small': await convert(small, 'webp'),
  'webp-large': await convert(large, 'webp'),
  'gif-small': await convert(small, 'gif'),
  'gif-animated': makeGif(60, 40, [[255, 0, 0], [0, 255, 0], [0, 0, 255], [9, 9, 9]]),
  'tiff': makeTiff(64, 48, [10, 20, 30], { pages: [[40, 50, 60]] }),
  'avif': await convert(small, 'avif', { quality: 40 }),
};
sources['webp-animated'] = await convert(sources['gif-animated']!, 'webp');

const bad: Case[] = [];
for (const [name, image] of Object.entries(sources)) {
  for (let f = 0.05; f < 1; f += 0.05) bad.push({ name: `${name}-cut-${f.toFixed(2)}`, input: image.subarray(0, Math.floor(image.length * f)) });
  for (const keep of [40, 100, 200, 400, Math.floor(image.length / 2)])
    if (keep < image.length - 16) bad.push({ name: `${name}-corrupt-${keep}`, input: corrupt(image, keep) });
  // A few random byte flips past the magic bytes.
  for (let i = 0; i < 4; i++) {
    const flipped = Buffer.from(image);
    for (let k = 0; k < 6; k++) flipped[8 + Math.floor(next() * (flipped.length - 8))] = Math.floor(next() * 256);
    bad.push({ name: `${name}-flips-${i}`, input: flipped });
  }
}

const TYPED = new Set(['unsupported_image', 'image_too_large', 'invalid_operations']);
const formats = [undefined, 'png', 'jpeg', 'webp', 'gif'] as const;
const operationLists = [
  [{ blur: 1 }],
  [{ blur: 1 }, { resize: { width: 100 } }],
  [{ resize: { width: 120 } }, { rotate: 90 }],
  [{ brightness: 1.2 }],
  [{ flip: 'h' }],
];

test(`${ROUNDS} rounds of ${JOBS} jobs at concurrency ${CONCURRENCY}, ${bad.length} bad inputs, seed ${SEED}`, async () => {
  let ok = 0;
  let refused = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const jobs: Array<Promise<void>> = [];
    for (let i = 0; i < JOBS; i++) {
      const operations = operationLists[Math.floor(next() * operationLists.length)]!;
      const format = formats[Math.floor(next() * formats.length)];
      const options = format ? { format } : {};
      if (next() < 0.25) {
        const good = next() < 0.7 ? small : large;
        jobs.push(edit(good, operations, options).then(() => void ok++));
        continue;
      }
      const c = bad[Math.floor(next() * bad.length)]!;
      jobs.push(
        edit(c.input, operations, options).then(
          () => void ok++, // a cut past the last pixel can still decode
          (err: MatteError) => {
            assert.instance(err, MatteError);
            assert.ok(TYPED.has(err.code), `${c.name} ${JSON.stringify(operations)} ${format}: ${err.code} ${err.message}`);
            refused++;
          },
        ),
      );
    }
    await Promise.all(jobs);
  }
  assert.is(ok + refused, ROUNDS * JOBS);
  assert.ok(refused > 0);
});

test.run();
