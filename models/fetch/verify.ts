// The checks a file passes before it is renamed into place: its size (when the publisher gives
// one), the publisher's md5 and the registry's sha256 (whichever the entry has; both when both);
// and the most bytes a source may deliver, which every source holds while it transfers.
import { stat } from 'node:fs/promises';
import { hashFile, type ModelEntry } from '../../lib/models.js';

/**
 * The most bytes a model file may have when its size is not published: about twice the largest
 * model of the registry (BiRefNet and RMBG-2.0 in fp32, about 1 GB), so that a source that never
 * stops sending cannot fill the disk.
 */
export const MAX_MODEL_BYTES = 2 * 1024 * 1024 * 1024;

/**
 * The most bytes a source may deliver for `entry`: its published size, else MAX_MODEL_BYTES. A
 * converted entry's size is the conversion's, not the fetched file's, so the cap holds there.
 */
export function transferLimit(entry: ModelEntry): number {
  return !entry.source.convert && entry.size != null ? entry.size : MAX_MODEL_BYTES;
}

/** The file's sha256 when it passes; an Error naming the mismatch when not. */
export async function verifyFile(name: string, path: string, entry: ModelEntry, expected: { sha256?: string; size?: number | null }): Promise<string> {
  const size = (await stat(path)).size;
  if (expected.size != null && size !== expected.size) {
    throw new Error(`${name}: the file has ${size} bytes, the registry expects ${expected.size}`);
  }
  const md5 = entry.source.md5;
  const [sha256, md5Digest] = await hashFile(path, md5 ? ['sha256', 'md5'] : ['sha256']);
  if (md5 && md5Digest !== md5) throw new Error(`${name}: checksum mismatch: md5 ${md5Digest}, the publisher's is ${md5}`);
  if (expected.sha256 && sha256 !== expected.sha256) throw new Error(`${name}: checksum mismatch: sha256 ${sha256}, the registry expects ${expected.sha256}`);
  if (!md5 && !expected.sha256) throw new Error(`${name}: the registry entry has neither sha256 nor source.md5`);
  return sha256!;
}
