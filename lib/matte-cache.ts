// The matte computed once (docs/api.md, "The matte cache"): the matte a removeBackground step made
// (after refinement, at the size of the image at that step) is kept in a cache the caller gives,
// under a key of everything that determines it, and handed to the addon instead of running the
// model again. The cache only stores opaque bytes; this file makes the key, and writes and checks
// the entries, so a cache that returns anything else (corrupt, truncated, another key's entry, not
// bytes at all) costs a recomputation, never a wrong cut-out nor a failed job. Every lookup and
// every write has a deadline: a cache that is slow or never answers costs a miss or a dropped
// entry, never a job, a slot or a shutdown that waits for it.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { deflate, inflate } from 'node:zlib';
import { MatteError } from './errors.js';
import { untilAborted } from './job.js';
import { addonCandidates } from './platform.js';
import type { LoadedModel } from './models.js';
import type { Step } from './schema.js';
import { MATTE_VERSION } from './version.js';

/**
 * Where mattes are kept: any store of bytes by key (a Map, Redis, a directory, the server's result
 * store). Both methods may be synchronous or return promises; a `get` that throws or does not
 * answer within LOOKUP_DEADLINE_MS counts as a miss, and one that answers anything but the bytes
 * `put` was given as bad; a `put` that throws or takes longer than WRITE_DEADLINE_MS is dropped.
 * `report`, if given, is told what each job did with the cache.
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

/** The longest a lookup may take, and at most a quarter of the job's budget (which it counts against). */
export const LOOKUP_DEADLINE_MS = 2000;
/** The longest a write may take: it runs after the answer, and whoever waits for it waits at most this. */
export const WRITE_DEADLINE_MS = 10_000;

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

/** JSON with every object's keys in order: the same settings make the same text, however written. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/**
 * The steps that may run the model, whose mattes the cache keeps: removeBackground (its refined
 * matte), and a resize with gravity subject before it (the model's matte at the model's size,
 * which chose the window; after removeBackground the cut-out's alpha is the subject).
 */
export function matteSteps(steps: readonly Step[]): number[] {
  const cutOut = steps.findIndex((s) => s.op === 'removeBackground');
  return steps.flatMap((s, i) => (s.op === 'removeBackground' || (s.op === 'resize' && s.gravity === 'subject' && (cutOut < 0 || i < cutOut)) ? [i] : []));
}

/** The model a job runs: its removeBackground's, else a subject gravity's, else the default (undefined). */
export function jobModelName(steps: readonly Step[]): string | undefined {
  for (const op of ['removeBackground', 'resize'] as const) {
    const step = steps.find((s) => s.op === op && s.model !== undefined);
    if (step?.op === 'removeBackground' || step?.op === 'resize') return step.model;
  }
  return undefined;
}

/**
 * The key of the matte of `steps[index]` on `input`: the input's bytes, the steps before it
 * (normalised, defaults filled in), the frame (the first: the addon hands over no removeBackground
 * matte of a job on several frames), the model's name, the sha256 of the file loaded and every
 * setting of its entry that the addon is given (`input`: size and normalisation; `output`: which
 * output and its post-processing), matte's build, and what the matte is: a removeBackground's with
 * its refinement settings, or the subject's (a resize's gravity, the model's own matte). So a
 * photo's every crop by its subject, at any size, shares one entry.
 */
export function matteKey(input: Uint8Array, steps: readonly Step[], index: number, model: LoadedModel): string {
  const step = steps[index]!;
  const what = {
    matte: MATTE_VERSION,
    addon: addonFingerprint(),
    input: createHash('sha256').update(input).digest('hex'),
    before: steps.slice(0, index),
    frame: 0,
    model: { name: model.name, sha256: model.sha256, input: model.entry.input, output: model.entry.output },
    ...(step.op === 'removeBackground' ? { refine: step.refine ?? true, tta: step.tta ?? false } : { use: 'subject' }),
  };
  return createHash('sha256').update(canonicalJson(what)).digest('hex');
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

/** What a lookup or a write gives when its deadline passes first. */
const LATE = Symbol('late');

/**
 * `work`, or LATE once `ms` have passed (the work is left to end by itself). `keepAlive`: the timer
 * keeps the process running (a job waits for the answer); without it a process with nothing else
 * to do may exit (a write nobody waits for).
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, keepAlive: boolean): Promise<T | typeof LATE> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), ms);
    if (!keepAlive) timer.unref();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    work.catch(() => {});
  }
}

/** The deadline of a lookup in a job with `budgetMs` (0: no budget): LOOKUP_DEADLINE_MS, and at most a quarter of the budget. */
export function lookupDeadlineMs(budgetMs: number): number {
  return budgetMs > 0 ? Math.max(1, Math.min(LOOKUP_DEADLINE_MS, Math.floor(budgetMs / 4))) : LOOKUP_DEADLINE_MS;
}

/**
 * Looks the matte up: a cache that fails or answers past `deadlineMs` is a miss, an answer that is
 * not a whole entry of this key (not bytes at all, included) is bad; the hit is reported once the
 * addon used it. Rejects with the job's `aborted` error as soon as `signal` aborts.
 */
export async function lookUpMatte(cache: MatteCache, key: string, maxPixels: number, control: { deadlineMs: number; signal?: AbortSignal }): Promise<MatteLookup> {
  let entry: unknown;
  try {
    entry = await untilAborted(
      withDeadline(
        new Promise<unknown>((resolve) => resolve(cache.get(key))), // a get that throws synchronously rejects here
        control.deadlineMs,
        true,
      ),
      control.signal,
    );
  } catch (err) {
    if (control.signal?.aborted) throw err;
    entry = undefined; // the cache failed: a miss
  }
  if (entry === undefined || entry === null || entry === LATE) {
    reportMatte(cache, 'miss');
    return { key };
  }
  // Only bytes can be an entry: a string, an ArrayBuffer or any other object is a bad one.
  const given = entry instanceof Uint8Array ? await decodeEntry(key, entry, maxPixels) : undefined;
  if (!given) reportMatte(cache, 'bad');
  return given ? { key, given } : { key };
}

/**
 * Stores a computed matte after the job answered: nothing waits for it, and a failure, or a write
 * still running after WRITE_DEADLINE_MS, only drops it.
 */
export function storeMatte(cache: MatteCache, key: string, matte: MatteBytes): void {
  void (async () => {
    try {
      const entry = await encodeEntry(key, matte);
      const written = await withDeadline(new Promise<void>((resolve) => resolve(cache.put(key, entry))), WRITE_DEADLINE_MS, false);
      reportMatte(cache, written === LATE ? 'dropped' : 'stored');
    } catch {
      reportMatte(cache, 'dropped');
    }
  })();
}

/** Refuses a `matteCache` option that is not a cache (a programming error, said as one). */
export function checkMatteCache(cache: unknown): asserts cache is MatteCache | undefined {
  if (cache === undefined) return;
  const c = cache as Partial<MatteCache> | null;
  if (typeof c !== 'object' || c === null || typeof c.get !== 'function' || typeof c.put !== 'function') {
    throw new MatteError('invalid_option', 'matteCache: must be an object with get(key) and put(key, bytes) methods', 'matteCache');
  }
}
