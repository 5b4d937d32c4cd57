// The model file matte loads, derived from the file a registry entry's source gives. Most entries
// load the fetched file as it is; an entry with `source.convert` is rewritten once, at fetch time
// (never at run time), and the result must have the entry's `sha256` while the fetched original
// must have `source.sha256`. Both checksums are in the registry, so the stored file is exactly
// the one that was measured and tested; the original is kept beside it (originalPath).
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { ModelEntry } from '../lib/models.js';

/** The conversions an entry may name in `source.convert`. */
export const CONVERSIONS = ['fp32'] as const;

/**
 * Where the fetcher keeps the verified original of a converted entry, beside `<name>.onnx`: never
 * loaded by matte (the bench's JS peer runs it, as its own package ships it), and the source of a
 * later conversion without a download. Deleting it costs nothing but that download.
 */
export function originalPath(name: string, dir: string): string {
  return join(dir, `${name}.original.onnx`);
}

/** The checksum of the file as fetched: `source.sha256` for a converted entry, else the entry's own. */
export function originalSha256(entry: ModelEntry): string {
  return (entry.source.convert ? entry.source.sha256 : entry.sha256) ?? '';
}

/**
 * The bytes to store for `name` from the verified original: the original itself, or its
 * conversion, whose sha256 is checked against the entry's before anything is written.
 */
export async function deriveModel(name: string, entry: ModelEntry, original: Uint8Array): Promise<Uint8Array> {
  const convert = entry.source.convert;
  if (!convert) return original;
  if (!(CONVERSIONS as readonly string[]).includes(convert)) {
    throw new Error(`${name}: unknown source.convert ${JSON.stringify(convert)} (one of ${CONVERSIONS.join(', ')})`);
  }
  let bytes: Uint8Array;
  try {
    // Imported here: the protobuf code is loaded only by a fetch that converts (not by every CLI start).
    const { convertModelToFloat32 } = await import('./convert-fp32.js');
    bytes = convertModelToFloat32(original).bytes;
  } catch (err) {
    throw new Error(`${name}: the conversion to ${convert} failed: ${err instanceof Error ? err.message : err}`);
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== entry.sha256) {
    throw new Error(`${name}: the ${convert} conversion has sha256 ${digest}, the registry expects ${entry.sha256}; nothing is stored`);
  }
  return bytes;
}
