// run-tests: parallel
// matte's own Lanczos3 downscale and bicubic enlargement of 8-bit RGB (native/resample/reduce.h,
// enlarge.h) against libvips' vips_resize, which every resize called before: the same sizes, and
// the same samples within one level of libvips' 12-bit C path (VIPS_NOVECTOR=1; its default 6-bit
// ORC path for the vertical pass of a downscale differs from both by rounding). Images of odd sizes
// so that edges, box pre-shrinks, both rounding directions of the output size, and an axis that
// shrinks while the other grows are crossed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { edit } from '../../lib/index.js';
import { decode, makePng } from '../helpers/images.js';
import { buildLibvipsProgram } from '../helpers/libvips-program.js';
import { uninstrumentedEnv } from '../helpers/uninstrumented-env.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'matte-resample-'));
const reference = join(dir, 'libvips-resize');

const grain = (x: number, y: number) => (((x * 7919) ^ (y * 104729)) % 41) - 20;
// Photo-like shading under noise, and hard black/white edges (ringing and clipping at both ends).
const photo = makePng(517, 389, (x, y) => [
  Math.max(0, Math.min(255, Math.round(120 + 90 * Math.sin(x / 13) * Math.cos(y / 29) + grain(x, y)))),
  Math.max(0, Math.min(255, Math.round(100 + 60 * Math.cos(y / 7) + grain(y, x)))),
  Math.max(0, Math.min(255, Math.round(60 + (x + y) / 4 + grain(x + 3, y)))),
], { alpha: false });
const edges = makePng(301, 203, (x, y) => ((x >> 2) + (y >> 3)) % 2 ? [255, 255, 255] : [0, 0, 0], { alpha: false });

test.before(() => buildLibvipsProgram(reference, ['test/helpers/libvips-resize.cc'], 'vips-cpp'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

async function libvipsResize(input: Buffer, hscale: number, vscale: number, env: Record<string, string>) {
  const inFile = join(dir, 'in.png');
  const outFile = join(dir, 'out.png');
  writeFileSync(inFile, input);
  await run(reference, [inFile, outFile, String(hscale), String(vscale)], { env });
  return decode(readFileSync(outFile));
}

const cases: Array<[string, Buffer, number, number, { width?: number; height?: number; fit?: string; enlarge?: boolean }]> = [
  ['photo, 1.29x (one pass each way, no box shrink)', photo, 517, 389, { width: 400 }],
  ['photo, 2.6x', photo, 517, 389, { width: 199 }],
  ['photo, 5.2x (a box shrink of 2 first)', photo, 517, 389, { width: 99 }],
  ['photo, 37x (box shrinks of 18)', photo, 517, 389, { width: 14 }],
  ['photo, to 3x2', photo, 517, 389, { height: 2 }],
  ['hard edges, 1.7x', edges, 301, 203, { width: 177 }],
  ['hard edges, 3.1x', edges, 301, 203, { height: 65 }],
  ['photo, enlarged 1.25x', photo, 517, 389, { width: 646, enlarge: true }],
  ['photo, enlarged 2x', photo, 517, 389, { width: 1034, enlarge: true }],
  ['photo, enlarged 3.7x by 1.1x (fill)', photo, 517, 389, { width: 1913, height: 428, fit: 'fill', enlarge: true }],
  ['photo, enlarged across, reduced down (fill)', photo, 517, 389, { width: 700, height: 150, fit: 'fill', enlarge: true }],
  ['photo, reduced across, enlarged down (fill)', photo, 517, 389, { width: 99, height: 500, fit: 'fill', enlarge: true }],
  ['hard edges, enlarged 1.6x', edges, 301, 203, { height: 325, enlarge: true }],
];

for (const [name, input, w, h, size] of cases) {
  test(`resample: ${name} matches libvips' resize`, async () => {
    const out = await edit(input, [{ resize: { fit: size.width && size.height ? 'cover' : 'contain', ...size } } as any], { format: 'png' });
    const mine = await decode(out.data);
    const plainEnv = uninstrumentedEnv();
    const exact = await libvipsResize(input, mine.width / w, mine.height / h, { ...plainEnv, VIPS_NOVECTOR: '1' });
    const orc = await libvipsResize(input, mine.width / w, mine.height / h, plainEnv);
    assert.equal([mine.width, mine.height], [exact.width, exact.height]);
    let max = 0;
    let sumExact = 0;
    let sumOrc = 0;
    for (let i = 0; i < mine.data.length; i++) {
      if (i % 4 === 3) continue;
      const d = Math.abs(mine.data[i]! - exact.data[i]!);
      max = Math.max(max, d);
      sumExact += d;
      sumOrc += Math.abs(mine.data[i]! - orc.data[i]!);
    }
    const samples = (mine.data.length / 4) * 3;
    assert.ok(max <= 1, `at most one level from libvips' C path, got ${max}`);
    assert.ok(sumExact / samples < 0.01, `mean difference from libvips' C path ${sumExact / samples}`);
    assert.ok(sumOrc / samples < 0.6, `mean difference from libvips' default path ${sumOrc / samples}`);
  });
}

test.run();
