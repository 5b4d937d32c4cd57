// A small byte mutator for the fuzzer (test/fuzz/run.ts). No npm library fits: Jazzer.js guides by
// coverage of instrumented JavaScript (our code under test is native, built by gcc) and fast-check
// generates values, not mutations of files. These are the classic dumb mutations (as in AFL's
// havoc stage), plus two pieces of structure: a header rewritten to declare a smaller size than its
// data (test/helpers/declared-small.ts), and PNG chunk CRCs recomputed after a mutation,
// otherwise libpng rejects nearly every mutated PNG at its first checksum and the decoder behind it
// is never reached.
import zlib from 'node:zlib';
import { declareSmaller } from '../helpers/declared-small.js';

/** A seeded PRNG (mulberry32): a run is reproducible from its seed. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  /** 0 <= x < 1 */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

// Values at integer boundaries, written where a header field may be (sizes, counts, offsets).
const INTERESTING_8 = [0, 1, 0x7f, 0x80, 0xff];
const INTERESTING_16 = [0, 1, 0x7fff, 0x8000, 0xffff, 0x0100, 0x4000];
const INTERESTING_32 = [0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0x10000, 0x3fffffff, 65536 * 65536 - 2];

/** An offset biased towards the start, where the headers are. */
function offset(rng: Rng, length: number): number {
  if (length === 0) return 0;
  return rng.chance(0.5) ? rng.int(Math.min(length, 64)) : rng.int(length);
}

type Mutation = (data: Buffer, rng: Rng, others: readonly Buffer[]) => Buffer;

const MUTATIONS: Record<string, Mutation> = {
  flipBits(data, rng) {
    const out = Buffer.from(data);
    const n = 1 + rng.int(8);
    for (let i = 0; i < n && out.length; i++) out[offset(rng, out.length)]! ^= 1 << rng.int(8);
    return out;
  },
  randomBytes(data, rng) {
    const out = Buffer.from(data);
    const n = 1 + rng.int(4);
    for (let i = 0; i < n && out.length; i++) out[offset(rng, out.length)] = rng.int(256);
    return out;
  },
  interesting(data, rng) {
    const out = Buffer.from(data);
    const at = offset(rng, out.length);
    const width = rng.pick([1, 2, 4]);
    if (at + width > out.length) return out;
    const bigEndian = rng.chance(0.5);
    if (width === 1) out[at] = rng.pick(INTERESTING_8);
    else if (width === 2) (bigEndian ? out.writeUInt16BE : out.writeUInt16LE).call(out, rng.pick(INTERESTING_16), at);
    else (bigEndian ? out.writeUInt32BE : out.writeUInt32LE).call(out, rng.pick(INTERESTING_32) >>> 0, at);
    return out;
  },
  arithmetic(data, rng) {
    const out = Buffer.from(data);
    const at = offset(rng, out.length);
    if (at + 2 > out.length) return out;
    const delta = (1 + rng.int(35)) * (rng.chance(0.5) ? 1 : -1);
    const bigEndian = rng.chance(0.5);
    const read = bigEndian ? out.readUInt16BE(at) : out.readUInt16LE(at);
    const value = (read + delta) & 0xffff;
    if (bigEndian) out.writeUInt16BE(value, at);
    else out.writeUInt16LE(value, at);
    return out;
  },
  truncate(data, rng) {
    return data.subarray(0, rng.int(data.length + 1));
  },
  deleteRange(data, rng) {
    const at = rng.int(data.length + 1);
    const length = 1 + rng.int(Math.max(1, Math.min(256, data.length - at)));
    return Buffer.concat([data.subarray(0, at), data.subarray(at + length)]);
  },
  duplicateRange(data, rng) {
    const at = rng.int(data.length + 1);
    const length = 1 + rng.int(Math.max(1, Math.min(512, data.length - at)));
    const chunk = data.subarray(at, at + length);
    const copies = 1 + rng.int(rng.chance(0.1) ? 64 : 3);
    return Buffer.concat([data.subarray(0, at + chunk.length), ...Array(copies).fill(chunk), data.subarray(at + chunk.length)]);
  },
  declaredSmall(data, rng) {
    // The header of the seed's format declares a smaller size than its data decodes to (TIFF
    // ImageWidth/Length, GIF screen, PNG IHDR, WebP canvas and frames, AVIF/HEIC ispe, JPEG SOF): the
    // limits must hold for what the decoder allocates, not for what the header says.
    const side = () => (rng.chance(0.5) ? 1 + rng.int(4) : 1 + rng.int(64));
    return declareSmaller(data, side(), side()) ?? data;
  },
  splice(data, rng, others) {
    // A piece of another seed (maybe of another format) written over or into this one.
    const donor = others.length ? rng.pick(others) : data;
    const from = rng.int(donor.length + 1);
    const chunk = donor.subarray(from, from + 1 + rng.int(256));
    const at = rng.int(data.length + 1);
    if (rng.chance(0.5)) return Buffer.concat([data.subarray(0, at), chunk, data.subarray(at)]);
    return Buffer.concat([data.subarray(0, at), chunk, data.subarray(at + chunk.length)]);
  },
};

export const MUTATION_NAMES = Object.keys(MUTATIONS);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Recomputes the CRC of every PNG chunk that fits in the file (the others are left as they are). */
export function fixPngCrcs(data: Buffer): Buffer {
  if (!data.subarray(0, 8).equals(PNG_SIGNATURE)) return data;
  const out = Buffer.from(data);
  let pos = 8;
  while (pos + 12 <= out.length) {
    const length = out.readUInt32BE(pos);
    const end = pos + 8 + length;
    if (end + 4 > out.length || length > 0x7fffffff) break;
    out.writeUInt32BE(zlib.crc32(out.subarray(pos + 4, end)) >>> 0, end);
    pos = end + 4;
  }
  return out;
}

/** 1..4 stacked mutations of `seed`; returns the bytes and the names of what was done. */
export function mutate(seed: Buffer, rng: Rng, others: readonly Buffer[] = []): { data: Buffer; mutations: string[] } {
  let data = seed;
  const done: string[] = [];
  const n = 1 + rng.int(4);
  for (let i = 0; i < n; i++) {
    const name = rng.pick(MUTATION_NAMES);
    data = MUTATIONS[name]!(data, rng, others);
    done.push(name);
  }
  if (rng.chance(0.8)) data = fixPngCrcs(data);
  return { data, mutations: done };
}
