// HEIC (HEVC in HEIF) images made at run time by libheif's own encoder, heif-enc (Debian's
// libheif-examples, which scripts/setup.sh installs): x265 through the same libheif 1.15 that
// decodes them, so nothing binary is committed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The PNG as a HEIC (lossy, 4:2:0). libheif 1.15 writes a grid of one 64x64 tile below 64x64. */
export function encodeHeic(png: Buffer, quality = 50): Buffer {
  const dir = mkdtempSync(path.join(tmpdir(), 'matte-heic-'));
  try {
    const input = path.join(dir, 'in.png');
    const output = path.join(dir, 'out.heic');
    writeFileSync(input, png);
    try {
      execFileSync('heif-enc', ['-q', String(quality), input, '-o', output], { stdio: 'pipe' });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('heif-enc is missing (Debian: libheif-examples): run sh scripts/setup.sh');
      throw err;
    }
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
