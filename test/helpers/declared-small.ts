// "Declared small, decoded big": files whose header declares one size while the data the decoder
// allocates for is larger (TIFF tiles, a JPEG inside a TIFF strip, GIF frames past the screen,
// WebP bitstreams against their canvas, AV1 and HEVC pictures against `ispe`). Built byte by byte,
// used by test/engine/decoded-size.test.ts and by the fuzzer's declaredSmall mutation
// (test/fuzz/mutate.ts).
import zlib from 'node:zlib';

type Entry = [tag: number, type: 3 | 4, values: number[]];

/** A little-endian TIFF with one directory (entries sorted by tag) followed by `chunks`. */
function writeTiff(entries: Entry[], chunks: Buffer[], offsetsTag: number, countsTag: number): Buffer {
  const all: Entry[] = [...entries, [offsetsTag, 4, chunks.map(() => 0)], [countsTag, 4, chunks.map((c) => c.length)]];
  all.sort((a, b) => a[0] - b[0]);
  const ifdSize = 2 + all.length * 12 + 4;
  let extra = 8 + ifdSize;
  const arrayAt = all.map(([, type, values]) => {
    const bytes = (type === 3 ? 2 : 4) * values.length;
    if (bytes <= 4) return 0;
    const at = extra;
    extra += bytes;
    return at;
  });
  let dataAt = extra;
  const offsets = all.find((e) => e[0] === offsetsTag)!;
  chunks.forEach((c, i) => {
    offsets[2][i] = dataAt;
    dataAt += c.length;
  });
  const head = Buffer.alloc(extra);
  head.write('II', 0, 'latin1');
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(8, 4);
  head.writeUInt16LE(all.length, 8);
  all.forEach(([tag, type, values], i) => {
    const at = 10 + i * 12;
    head.writeUInt16LE(tag, at);
    head.writeUInt16LE(type, at + 2);
    head.writeUInt32LE(values.length, at + 4);
    const base = arrayAt[i] || at + 8;
    if (arrayAt[i]) head.writeUInt32LE(arrayAt[i]!, at + 8);
    values.forEach((v, k) => (type === 3 ? head.writeUInt16LE(v, base + 2 * k) : head.writeUInt32LE(v, base + 4 * k)));
  });
  return Buffer.concat([head, ...chunks]);
}

/**
 * A `width` x `height` TIFF stored in deflated `tileWidth` x `tileHeight` tiles of zeros, with
 * `samples` samples a pixel (8-bit, or float32; 4 8-bit samples are CMYK with `cmyk`). 1x1 with a
 * 9984x9984 8-bit tile: about 97 KB; with 16 float32 samples, about 6 MB. The last `brokenTiles`
 * tiles (the bottom right ones) have a broken deflate stream (an invalid block type).
 */
export function tiledTiff(o: { width: number; height: number; tileWidth: number; tileHeight: number; samples?: number; float?: boolean; cmyk?: boolean; brokenTiles?: number }): Buffer {
  const samples = o.samples ?? 1;
  const bytes = o.float ? 4 : 1;
  const tile = zlibZeros(o.tileWidth * o.tileHeight * samples * bytes);
  const broken = Buffer.from(tile);
  broken[2] = 0xff; // the first deflate block: final, of the reserved type 3
  const tiles = Math.ceil(o.width / o.tileWidth) * Math.ceil(o.height / o.tileHeight);
  const entries: Entry[] = [
    [256, 4, [o.width]],
    [257, 4, [o.height]],
    [258, 3, new Array(samples).fill(bytes * 8)],
    [259, 3, [8]], // deflate
    [262, 3, [o.cmyk ? 5 : 1]], // separated (CMYK), or min-is-black
    [277, 3, [samples]],
    [284, 3, [1]],
    [322, 4, [o.tileWidth]],
    [323, 4, [o.tileHeight]],
  ];
  if (samples > 1 && !o.cmyk) entries.push([338, 3, new Array(samples - 1).fill(0)]);
  if (o.float) entries.push([339, 3, new Array(samples).fill(3)]);
  const chunks = Array.from({ length: tiles }, (_, i) => (i >= tiles - (o.brokenTiles ?? 0) ? broken : tile));
  return writeTiff(entries, chunks, 324, 325);
}

/** A `width` x `height` RGB TIFF whose one strip is `jpeg` (Compression 7), whatever size it holds. */
export function jpegInTiff(jpeg: Buffer, width: number, height: number): Buffer {
  const entries: Entry[] = [
    [256, 4, [width]],
    [257, 4, [height]],
    [258, 3, [8, 8, 8]],
    [259, 3, [7]], // JPEG
    [262, 3, [6]], // YCbCr
    [277, 3, [3]],
    [278, 4, [height]],
    [284, 3, [1]],
  ];
  return writeTiff(entries, [jpeg], 273, 279);
}

/** A GIF whose logical screen is `screen` and whose frames have the given sizes (LZW data: a pixel each). */
export function gifWithFrames(screen: [number, number], frames: Array<[number, number]>): Buffer {
  const head = Buffer.alloc(13);
  head.write('GIF89a', 0, 'latin1');
  head.writeUInt16LE(screen[0], 6);
  head.writeUInt16LE(screen[1], 8);
  head[10] = 0x80; // a global colour table of 2 entries
  const palette = Buffer.from([0, 0, 0, 255, 255, 255]);
  const parts = frames.map(([width, height]) => {
    const descriptor = Buffer.alloc(10);
    descriptor[0] = 0x2c;
    descriptor.writeUInt16LE(width, 5);
    descriptor.writeUInt16LE(height, 7);
    // LZW minimum code size 2, then one sub-block: clear, a pixel, end of information.
    return Buffer.concat([descriptor, Buffer.from([0x02, 0x02, 0x44, 0x01, 0x00])]);
  });
  return Buffer.concat([head, palette, ...parts, Buffer.from([0x3b])]);
}

/**
 * A zlib stream of `total` zero bytes without holding them: deflated 64 MiB pieces (non-final,
 * byte-aligned by a sync flush) repeated, a final empty block, and the Adler-32 of zeros.
 */
export function zlibZeros(total: number): Buffer {
  const PIECE = 64 * 1024 * 1024;
  const raw = (n: number) => zlib.deflateRawSync(Buffer.alloc(n), { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH });
  const full = raw(Math.min(PIECE, total));
  const parts: Buffer[] = [Buffer.from([0x78, 0xda])];
  for (let done = 0; done + PIECE <= total; done += PIECE) parts.push(full);
  if (total % PIECE) parts.push(raw(total % PIECE));
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((total % 65521) << 16) | 1) >>> 0);
  parts.push(Buffer.from([0x03, 0x00]), adler); // final fixed-Huffman block holding only its end
  return Buffer.concat(parts);
}

function* isobmffBoxes(data: Buffer, start: number, end: number): Generator<{ type: string; at: number; end: number }> {
  let pos = start;
  while (pos + 8 <= end) {
    const length = data.readUInt32BE(pos);
    if (length < 8 || pos + length > end) return;
    yield { type: data.toString('latin1', pos + 4, pos + 8), at: pos, end: pos + length };
    pos += length;
  }
}

const CONTAINERS: Record<string, number> = { meta: 4, iprp: 0, ipco: 0 }; // payload offset of each

/** Rewrites every `ispe` of an AVIF/HEIF to width x height (what libvips then reports). */
function patchIspe(data: Buffer, width: number, height: number, start = 0, end = data.length): number {
  let patched = 0;
  for (const box of isobmffBoxes(data, start, end)) {
    if (box.type === 'ispe' && box.end - box.at >= 20) {
      data.writeUInt32BE(width, box.at + 12);
      data.writeUInt32BE(height, box.at + 16);
      patched++;
    } else if (box.type in CONTAINERS) {
      patched += patchIspe(data, width, height, box.at + 8 + CONTAINERS[box.type]!, box.end);
    }
  }
  return patched;
}

function child(data: Buffer, parent: { at: number; end: number }, type: string, payloadOffset = 8): { at: number; end: number } {
  for (const box of isobmffBoxes(data, parent.at + payloadOffset, parent.end)) if (box.type === type) return box;
  throw new Error(`no ${type} box`);
}

/** The NAL units of an hvcC box (HEVCDecoderConfigurationRecord: 22 bytes, then arrays of them). */
function hvcCNalUnits(hvcC: Buffer): Buffer[] {
  const units: Buffer[] = [];
  let pos = 8 + 22;
  const arrays = hvcC[pos++]!;
  for (let i = 0; i < arrays; i++) {
    const count = hvcC.readUInt16BE(pos + 1);
    pos += 3;
    for (let j = 0; j < count; j++) {
      const length = hvcC.readUInt16BE(pos);
      units.push(hvcC.subarray(pos + 2, pos + 2 + length));
      pos += 2 + length;
    }
  }
  return units;
}

/** The boxes of a one-item HEIC as heif-enc writes it (64x64 and larger: no grid). */
function heicLayout(data: Buffer) {
  const top = { at: 0, end: data.length };
  const meta = child(data, top, 'meta', 0);
  const inside = { at: meta.at + 4, end: meta.end }; // after the full box's version and flags
  const iloc = child(data, inside, 'iloc');
  const iprp = child(data, inside, 'iprp');
  const ipco = child(data, iprp, 'ipco');
  return { meta, iloc, iprp, ipco, hvcC: child(data, ipco, 'hvcC'), ispe: child(data, ipco, 'ispe') };
}

/**
 * `large` declaring `small`'s size everywhere a HEIF reader looks (its ispe and its hvcC's SPS are
 * `small`'s) while its item's data starts with `large`'s own parameter sets (VPS, SPS, PPS, each after
 * a 4-byte length) before its picture: libheif 1.15 hands libde265 the hvcC's NAL units and then
 * the item's data, and libde265 decodes the picture at the last SPS it was given. Both files must
 * be one-item HEICs as heif-enc writes them.
 */
export function heicWithForeignParameterSets(small: Buffer, large: Buffer): Buffer {
  const from = heicLayout(small);
  const to = heicLayout(large);
  const smallHvcC = small.subarray(from.hvcC.at, from.hvcC.end);
  const inBand = Buffer.concat(
    hvcCNalUnits(large.subarray(to.hvcC.at, to.hvcC.end)).flatMap((unit) => {
      const length = Buffer.alloc(4);
      length.writeUInt32BE(unit.length);
      return [length, unit];
    }),
  );
  // The iloc (version 0 or 1) of one item with one extent: 4-byte offsets and lengths.
  const at = to.iloc.at + 8;
  const version = large[at]!;
  const sizes = large.readUInt16BE(at + 4);
  const baseSize = (sizes >> 4) & 0xf;
  if (version > 1 || sizes >> 8 !== 0x44 || (baseSize !== 0 && baseSize !== 4) || large.readUInt16BE(at + 6) !== 1) throw new Error('not a one-item HEIC as heif-enc writes it');
  const entry = at + 8;
  const head = 2 + (version === 1 ? 2 : 0) + 2; // item_ID, construction_method, data_reference_index
  const base = baseSize ? large.readUInt32BE(entry + head) : 0;
  const extents = entry + head + baseSize;
  if (large.readUInt16BE(extents) !== 1) throw new Error('not a one-item HEIC as heif-enc writes it');
  const offset = base + large.readUInt32BE(extents + 2);
  const length = large.readUInt32BE(extents + 6);

  const grown = smallHvcC.length - (to.hvcC.end - to.hvcC.at) + 8; // the meta box grows by this
  if (offset < to.meta.end) throw new Error('the item data is expected after the meta box');
  const newEntry = Buffer.alloc(head + baseSize + 2 + 16);
  large.copy(newEntry, 0, entry, entry + head); // the base offset stays 0
  newEntry.writeUInt16BE(2, head + baseSize);
  newEntry.writeUInt32BE(large.length + grown + 8, head + baseSize + 2); // the in-band sets, in a box appended below
  newEntry.writeUInt32BE(inBand.length, head + baseSize + 6);
  newEntry.writeUInt32BE(offset + grown, head + baseSize + 10);
  newEntry.writeUInt32BE(length, head + baseSize + 14);
  const entryEnd = extents + 10;
  if (!(to.iloc.end <= to.iprp.at)) throw new Error('iloc is expected before iprp');
  const out = Buffer.concat([
    large.subarray(0, entry),
    newEntry,
    large.subarray(entryEnd, to.hvcC.at),
    smallHvcC,
    large.subarray(to.hvcC.end),
  ]);
  const shift = newEntry.length - (entryEnd - entry);
  const bump = (box: { at: number }, by: number, moved = 0) => out.writeUInt32BE(out.readUInt32BE(box.at + moved) + by, box.at + moved);
  bump(to.meta, grown);
  bump(to.iloc, shift);
  bump(to.iprp, grown - shift, shift);
  bump(to.ipco, grown - shift, shift);
  // The ispe now declares small's size (it lies after the hvcC when heif-enc writes it, or before).
  const ispeAt = to.ispe.at + shift + (to.ispe.at > to.hvcC.at ? grown - 8 : 0);
  small.copy(out, ispeAt + 12, from.ispe.at + 12, from.ispe.at + 20);
  const box = Buffer.alloc(8);
  box.writeUInt32BE(8 + inBand.length);
  box.write('mdat', 4, 'latin1');
  return Buffer.concat([out, box, inBand]);
}

/**
 * The HEIF file with item `id`'s ispe association removed (its index set to 0, which names no
 * property): e.g. a grid's tile, which libheif 1.15 then decodes at whatever size its stream says.
 * For an ipma of version 0 with 1-byte associations, as libheif writes it.
 */
export function withoutIspe(heif: Buffer, id: number): Buffer {
  const out = Buffer.from(heif);
  const meta = child(out, { at: 0, end: out.length }, 'meta', 0);
  const iprp = child(out, { at: meta.at + 4, end: meta.end }, 'iprp');
  const ipco = child(out, iprp, 'ipco');
  const properties = [...isobmffBoxes(out, ipco.at + 8, ipco.end)].map((box) => box.type);
  const ipma = child(out, iprp, 'ipma');
  if (out[ipma.at + 8] !== 0 || (out[ipma.at + 11]! & 1) !== 0) throw new Error('not an ipma of version 0 with 1-byte associations');
  let pos = ipma.at + 16;
  for (let entry = out.readUInt32BE(ipma.at + 12); entry > 0; entry--) {
    const item = out.readUInt16BE(pos);
    const count = out[pos + 2]!;
    for (let i = 0; i < count; i++) {
      const at = pos + 3 + i;
      if (item === id && properties[(out[at]! & 0x7f) - 1] === 'ispe') {
        out[at] = 0;
        return out;
      }
    }
    pos += 3 + count;
  }
  throw new Error(`item ${id} has no ispe`);
}

/** Rewrites the WebP's VP8X canvas and every ANMF frame size to width x height (bitstreams untouched). */
function patchWebp(data: Buffer, width: number, height: number): number {
  let patched = 0;
  let pos = 12;
  while (pos + 8 <= data.length) {
    const type = data.toString('latin1', pos, pos + 4);
    const length = data.readUInt32LE(pos + 4);
    if (type === 'VP8X' && pos + 18 <= data.length) {
      data.writeUIntLE(width - 1, pos + 12, 3);
      data.writeUIntLE(height - 1, pos + 15, 3);
      patched++;
    }
    if (type === 'ANMF' && pos + 24 <= data.length) {
      data.writeUIntLE(width - 1, pos + 14, 3);
      data.writeUIntLE(height - 1, pos + 17, 3);
      patched++;
    }
    pos += 8 + length + (length & 1);
  }
  return patched;
}

/**
 * The same file with a smaller declared size and the same data: the header of each format (TIFF
 * ImageWidth/Length, GIF screen, PNG IHDR, WebP canvas and frames, AVIF/HEIC ispe, JPEG SOF) says
 * width x height. Returns undefined for a file it cannot patch.
 */
export function declareSmaller(input: Buffer, width: number, height: number): Buffer | undefined {
  const data = Buffer.from(input);
  const magic = data.toString('latin1', 0, 4);
  if (magic === 'II*\0' && data.length >= 8) {
    const ifd = data.readUInt32LE(4);
    if (ifd + 2 > data.length) return undefined;
    const count = data.readUInt16LE(ifd);
    for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= data.length; i++) {
      const at = ifd + 2 + i * 12;
      const tag = data.readUInt16LE(at);
      const short = data.readUInt16LE(at + 2) === 3;
      const value = tag === 256 ? width : tag === 257 ? height : undefined;
      if (value !== undefined) (short ? data.writeUInt16LE(value & 0xffff, at + 8) : data.writeUInt32LE(value, at + 8));
    }
    return data;
  }
  if (magic === 'GIF8' && data.length >= 10) {
    data.writeUInt16LE(width & 0xffff, 6);
    data.writeUInt16LE(height & 0xffff, 8);
    return data;
  }
  if (magic === '\x89PNG' && data.length >= 33) {
    data.writeUInt32BE(width, 16);
    data.writeUInt32BE(height, 20);
    data.writeUInt32BE(zlib.crc32(data.subarray(12, 29)) >>> 0, 29);
    return data;
  }
  if (magic === 'RIFF') return patchWebp(data, width, height) ? data : undefined;
  if (data.toString('latin1', 4, 8) === 'ftyp') return patchIspe(data, width, height) ? data : undefined;
  if (data[0] === 0xff && data[1] === 0xd8) {
    for (let pos = 2; pos + 9 <= data.length && data[pos] === 0xff; pos += 2 + data.readUInt16BE(pos + 2)) {
      const marker = data[pos + 1]!;
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
        data.writeUInt16BE(height & 0xffff, pos + 5);
        data.writeUInt16BE(width & 0xffff, pos + 7);
        return data;
      }
    }
  }
  return undefined;
}
