// What a file of the disk store costs, and how its directories are walked (disk.ts for results,
// disk-entries.ts for the matte cache): quotas count the space a file takes (its allocated
// blocks, at least whole blocks of the file system's size, one at least), never its length
// alone; and a sweep reads a directory in batches, never its whole listing at once.
import type { Dir, Stats } from 'node:fs';
import { opendir, statfs } from 'node:fs/promises';
import { DEFAULT_BLOCK_BYTES, storedCost } from './common.js';

/** The directory's file-system block size (statfs), DEFAULT_BLOCK_BYTES where it does not say. */
export async function blockSizeOf(dir: string): Promise<number> {
  try {
    const { bsize } = await statfs(dir);
    return bsize > 0 ? bsize : DEFAULT_BLOCK_BYTES;
  } catch {
    return DEFAULT_BLOCK_BYTES;
  }
}

/** The space a file takes: its allocated blocks (st_blocks x 512), at least storedCost of its size. */
export function fileCost(info: Stats, blockSize: number): number {
  return Math.max(info.blocks * 512, storedCost(info.size, blockSize));
}

/** Names read from the directory at a time. */
const BATCH = 256;

/** The names in `dir`, read BATCH at a time (fs.opendir): a directory of millions costs one batch of memory. */
export async function* directoryNames(dir: string): AsyncGenerator<string> {
  const handle: Dir = await opendir(dir, { bufferSize: BATCH });
  for await (const entry of handle) yield entry.name; // the iterator closes the handle, also on an early exit
}
