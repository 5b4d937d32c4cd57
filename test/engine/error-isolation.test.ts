// run-tests: parallel
// libvips keeps one error buffer for the whole process. Under concurrency, each failing job must
// still get its own code and a message about its own input, and every good job must succeed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { configure, edit, MatteError } from '../../lib/index.js';
import { convert, gradient } from '../helpers/images.js';

configure({ concurrency: 4 });

const png = gradient(300, 200);
const jpeg = await convert(png, 'jpeg');
const webp = await convert(png, 'webp');
const gif = await convert(png, 'gif');

// Corrupt in the pixel data (the header is fine, so the failure happens while pixels are computed).
function corrupt(image: Buffer, keep: number): Buffer {
  const out = Buffer.from(image);
  for (let i = keep; i < out.length - 16; i++) out[i] = (i * 151) & 0xff;
  return out;
}
function truncated(image: Buffer, fraction: number): Buffer {
  return image.subarray(0, Math.floor(image.length * fraction));
}

type Case = { name: string; input: Buffer; type?: string };
const bad: Case[] = [
  { name: 'png-truncated', input: truncated(png, 0.5), type: 'png' },
  { name: 'jpeg-truncated', input: truncated(jpeg, 0.5), type: 'jpeg' },
  { name: 'webp-truncated', input: truncated(webp, 0.6), type: 'webp' },
  { name: 'gif-truncated', input: truncated(gif, 0.5), type: 'gif' },
  { name: 'png-corrupt', input: corrupt(png, 200), type: 'png' },
];

// What each bad input gives on its own: the reference outcome.
const alone = new Map<string, string>();
for (const c of bad) {
  const r = await edit(c.input, [{ blur: 1 }]).then(() => 'ok', (e: MatteError) => `${e.code}`);
  alone.set(c.name, r);
}

test('alone: every bad input is refused as unsupported_image', () => {
  for (const c of bad) assert.is(alone.get(c.name), 'unsupported_image', c.name);
});

test('concurrently: every failure gets its own code and a message naming its own type; every good job succeeds', async () => {
  const types = ['png', 'jpeg', 'webp', 'gif'];
  for (let round = 0; round < 6; round++) {
    const jobs: Array<Promise<void>> = [];
    for (let i = 0; i < 24; i++) {
      if (i % 3 === 0) {
        jobs.push(
          edit(png, [{ blur: 1 }, { resize: { width: 100 } }]).then((out) => {
            assert.is(out.width, 100);
          }),
        );
        continue;
      }
      const c = bad[(i + round) % bad.length]!;
      jobs.push(
        edit(c.input, [{ blur: 1 }]).then(
          () => assert.unreachable(`${c.name} succeeded`),
          (err: MatteError) => {
            assert.instance(err, MatteError);
            assert.is(err.code, alone.get(c.name), `${c.name}: ${err.message}`);
            const others = types.filter((t) => t !== c.type && !(c.type === 'jpeg' && t === 'jpg'));
            for (const other of others) assert.not.match(err.message.toLowerCase(), new RegExp(`\\b${other}\\b|vips${other}|${other}load|${other}2vips`), `${c.name} got another job's message: ${err.message}`);
            assert.match(err.message.toLowerCase(), c.type!, `${c.name}: ${err.message}`);
          },
        ),
      );
    }
    await Promise.all(jobs);
  }
});

test.run();
