// The matte computed once (docs/api.md, "The matte cache"): the matte a removeBackground step made
// (after refinement, at the size of the image at that step) is kept in a cache the caller gives,
// under a key of everything that determines it, and handed to the addon instead of running the
// model again. The cache only stores opaque bytes; this file makes the key, and writes and checks
// the entries, so a cache that returns anything else (corrupt, truncated, another key's entry)
// costs a recomputation, never a wrong cut-out.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { deflate, inflate } from 'node:zlib';
import { addonCandidates } from './platform.js';
import type { LoadedModel } from './models.js';
import type { Step } from './schema.js';
import { MATTE_VERSION } from './version.js';

/**
 * Where mattes are kept: any store of bytes by key (a Map, Redis, a directory, the server's result
 * store). Both methods may be synchronous or return promises; a `get` that throws counts as a miss,
 * a `put` that throws is ignored. `report`, if given, is told what each job did with the cache.
 */
export interface MatteCache {
  get(key: string): Uint8Array | undefined | Promise<Uint8Array | undefined>;
  put(key: string, entry: Uint8Array): void | Promise<void>;
  report?(outcome: MatteCacheOutcome): void;
}

/** hit, miss; bad: an entry was found but could not be used (recomputed); stored, dropped: the put's end. */
export type MatteCacheOutcome = 'hit' | 'miss' | 'bad' | 'stored' | 'dropped';

/** A matte in the addon's terms: 8-bit, one band, width x height. */
export interface MatteBytes {
  data: Buffer;
  width: number;
  height: number;
}

const MAGIC = Buffer.from('matte-cache-1\n');
const HEADER = MAGIC.length + 32 + 8; // magic, sha256 of the key, width and height
const deflateAsync = promisify(deflate);
const inflateAsync = promisify(inflate);

let addonDigest: string | undefined;
/**
 * The addon's own bytes stand for the decoder, the steps and the refinement that made the matte:
 * a rebuilt addon (another refinement) never reads its predecessor's mattes.
 */
function addonFingerprint(): string {
  if (addonDigest === undefined) {
    const [addon] = addonCandidates();
    addonDigest = addon ? createHash('sha256').update(readFileSync(addon.path)).digest('hex') : 'unknown';
  }
  return addonDigest;
}

/**
 * The key of the matte of `steps[index]` (a removeBackground) on `input`: the input's bytes, the
 * steps before it (normalised, defaults filled in), the frame (the first: the addon hands over no
 * matte of a job on several frames), the model and its file's sha256, the refinement settings and
 * matte's build.
 */
export function matteKey(input: Uint8Array, steps: readonly Step[], index: number, model: LoadedModel): string {
  const step = steps[index] as Extract<Step, { op: 'removeBackground' }>;
  const what = {
    matte: MATTE_VERSION,
    addon: addonFingerprint(),
    input: createHash('sha256').update(input).digest('hex'),
    before: steps.slice(0, index),
    frame: 0,
    model: { name: model.name, sha256: model.entry.sha256 },
    refine: step.refine ?? true,
    tta: step.tta ?? false,
  };
  return createHash('sha256').update(JSON.stringify(what)).digest('hex');
}

/** An entry: the header (which key, the size) and the matte, deflated (zlib's Adler-32 checks it on reading). */
export async function encodeEntry(key: string, matte: MatteBytes): Promise<Buffer> {
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  Buffer.from(key, 'hex').copy(header, MAGIC.length);
  header.writeUInt32BE(matte.width, MAGIC.length + 32);
  header.writeUInt32BE(matte.height, MAGIC.length + 36);
  return Buffer.concat([header, await deflateAsync(matte.data, { level: 1 })]);
}

/** The matte in an entry, or undefined when it is not a whole entry of this key (at most `maxPixels`). */
export async function decodeEntry(key: string, entry: Uint8Array, maxPixels: number): Promise<MatteBytes | undefined> {
  const bytes = Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength);
  if (bytes.length <= HEADER || !bytes.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  if (!bytes.subarray(MAGIC.length, MAGIC.length + 32).equals(Buffer.from(key, 'hex'))) return undefined;
  const width = bytes.readUInt32BE(MAGIC.length + 32);
  const height = bytes.readUInt32BE(MAGIC.length + 36);
  const size = width * height;
  if (width < 1 || height < 1 || size > maxPixels) return undefined;
  try {
    const data = await inflateAsync(bytes.subarray(HEADER), { maxOutputLength: size });
    return data.length === size ? { data, width, height } : undefined;
  } catch {
    return undefined; // truncated, corrupt (Adler-32), or larger than its header says
  }
}

/** What a job asks of the cache before it runs: the key, and the matte when one was found. */
export interface MatteLookup {
  key: string;
  given?: MatteBytes;
}

/** Tells the cache's `report` hook, if any, what happened; it can never fail the job. */
export function reportMatte(cache: MatteCache, outcome: MatteCacheOutcome): void {
  try {
    cache.report?.(outcome);
  } catch {
    // a reporting hook never fails the job
  }
}

/** Looks the matte up (a failing cache is a miss, an unreadable entry bad); the hit is reported once the addon used it. */
export async function lookUpMatte(cache: MatteCache, key: string, maxPixels: number): Promise<MatteLookup> {
  let entry: Uint8Array | undefined;
  try {
    entry = await cache.get(key);
  } catch {
    entry = undefined;
  }
  if (!entry) {
    reportMatte(cache, 'miss');
    return { key };
  }
  const given = await decodeEntry(key, entry, maxPixels);
  if (!given) reportMatte(cache, 'bad');
  return given ? { key, given } : { key };
}

/** Stores a computed matte after the job answered: nothing waits for it, and a failure only drops it. */
export function storeMatte(cache: MatteCache, key: string, matte: MatteBytes): void {
  void (async () => {
    try {
      await cache.put(key, await encodeEntry(key, matte));
      reportMatte(cache, 'stored');
    } catch {
      reportMatte(cache, 'dropped');
    }
  })();
}
