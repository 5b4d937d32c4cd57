// Test images made in the tests (no binaries committed), and decoding of matte's outputs.
// Pixels are checked through pngjs (pure JS); other formats are first converted to PNG by the
// addon with no step, whose decoders are libvips' own. sharp is never loaded in a test process:
// it bundles its own libvips, and two libvips in one process crash.
import zlib from 'node:zlib';
import { PNG } from 'pngjs';
import gifenc from 'gifenc';
import { addon } from '../../lib/native.js';

const { GIFEncoder, quantize, applyPalette } = gifenc;

export type Rgba = [number, number, number, number];
export type PixelFn = (x: number, y: number) => Rgba | [number, number, number];

/** A PNG made pixel by pixel; with `alpha: false` it is 3-band (colour type 2). */
export function makePng(width: number, height: number, fn: PixelFn, options: { alpha?: boolean } = {}): Buffer {
  const png = new PNG({ width, height, colorType: options.alpha === false ? 2 : 6, inputHasAlpha: true });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const p = fn(x, y);
      const i = (y * width + x) * 4;
      png.data[i] = p[0];
      png.data[i + 1] = p[1];
      png.data[i + 2] = p[2];
      png.data[i + 3] = p.length === 4 ? p[3] : 255;
    }
  }
  return PNG.sync.write(png, { colorType: options.alpha === false ? 2 : 6 });
}

export const solid = (width: number, height: number, colour: Rgba | [number, number, number], options: { alpha?: boolean } = {}) =>
  makePng(width, height, () => colour, options);

/** A subject (a disc of `fg`) on a plain background: the standard image for trim and mattes. */
export function disc(width: number, height: number, radius: number, fg: Rgba | [number, number, number], bg: Rgba | [number, number, number], options: { alpha?: boolean } = {}): Buffer {
  const cx = width / 2, cy = height / 2;
  return makePng(width, height, (x, y) => ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 <= radius * radius ? fg : bg), options);
}

/** A horizontal gradient with a vertical one in green: every pixel differs, good for geometry. */
export const gradient = (width: number, height: number) =>
  makePng(width, height, (x, y) => [Math.round((x * 255) / Math.max(1, width - 1)), Math.round((y * 255) / Math.max(1, height - 1)), 128], { alpha: false });

/** Converts an image of any supported format to the given format through the addon, no steps. */
export async function convert(input: Buffer, format: 'png' | 'webp' | 'jpeg' | 'gif' | 'avif', options: { quality?: number; anim?: boolean } = {}): Promise<Buffer> {
  const out = await addon.run(input, { steps: [], format, quality: options.quality ?? 90, anim: options.anim ?? true, maxPixels: 1e9, maxFrames: 100000, maxMatteFrames: 1000 }, undefined);
  return out.data;
}

export interface Decoded {
  width: number;
  height: number;
  /** RGBA, 4 bytes a pixel. */
  data: Buffer;
  /** Whether the PNG the image was decoded from has an alpha channel. */
  hasAlpha: boolean;
}

/** Decodes any output of matte (first frame only for animations). */
export async function decode(image: Buffer): Promise<Decoded> {
  const png = isPng(image) ? image : await convert(image, 'png', { anim: false });
  const colorType = png[25]!;
  const decoded = PNG.sync.read(png);
  return { width: decoded.width, height: decoded.height, data: decoded.data, hasAlpha: colorType === 6 || colorType === 4 };
}

export function pixel(image: Decoded, x: number, y: number): Rgba {
  const i = (y * image.width + x) * 4;
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!, image.data[i + 3]!];
}

/** Largest per-channel difference between a pixel and the expected value. */
export function distance(a: readonly number[], b: readonly number[]): number {
  return Math.max(...a.map((v, i) => Math.abs(v - (b[i] ?? v))));
}

export function isPng(b: Buffer): boolean {
  return b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
}

/** The format of an encoded image, by its magic bytes. */
export function formatOf(b: Buffer): string {
  if (isPng(b)) return 'png';
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.subarray(0, 6).toString('latin1') === 'GIF89a' || b.subarray(0, 6).toString('latin1') === 'GIF87a') return 'gif';
  if (b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP') return 'webp';
  if (b.subarray(4, 8).toString('latin1') === 'ftyp' && /avi[fs]/.test(b.subarray(8, 12).toString('latin1'))) return 'avif';
  return 'unknown';
}

/** An animated GIF whose frame i is filled with colours[i] (gifenc, pure JS). */
export function makeGif(width: number, height: number, colours: Array<[number, number, number]>, options: { delay?: number; delays?: number[]; repeat?: number; frameFn?: (i: number) => PixelFn } = {}): Buffer {
  const gif = GIFEncoder();
  colours.forEach((colour, i) => {
    const frame = { delay: options.delays?.[i] ?? options.delay ?? 100, repeat: options.repeat ?? 0 };
    // A frame of one colour is that colour's palette and index 0 everywhere, what gifenc's quantizer
    // gives too; the quantizer allocates two tables of 65,536 entries a frame, which made a GIF of
    // thousands of frames the slowest thing its test did (the figures are in the commit).
    if (!options.frameFn) return gif.writeFrame(new Uint8Array(width * height), width, height, { ...frame, palette: [[colour[0], colour[1], colour[2]]] });
    const rgba = new Uint8Array(width * height * 4);
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const p = options.frameFn(i)(x, y);
        rgba.set([p[0], p[1], p[2], 255], (y * width + x) * 4);
      }
    const palette = quantize(rgba, 256);
    gif.writeFrame(applyPalette(rgba, palette), width, height, { ...frame, palette });
  });
  gif.finish();
  return Buffer.from(gif.bytes());
}

/** Number of frames of a GIF, counted from its image descriptors. */
export function gifFrames(b: Buffer): number {
  let pos = 13;
  if (b[10]! & 0x80) pos += 3 * (1 << ((b[10]! & 7) + 1));
  let frames = 0;
  const skip = (p: number) => {
    while (p < b.length) {
      const len = b[p]!;
      p += 1;
      if (len === 0) return p;
      p += len;
    }
    return p;
  };
  while (pos < b.length) {
    const block = b[pos];
    if (block === 0x3b) break;
    if (block === 0x21) pos = skip(pos + 2);
    else if (block === 0x2c) {
      const flags = b[pos + 9]!;
      pos += 10;
      if (flags & 0x80) pos += 3 * (1 << ((flags & 7) + 1));
      frames++;
      pos = skip(pos + 1);
    } else break;
  }
  return frames;
}

/**
 * A minimal uncompressed RGB TIFF, one strip a page. `stripOffset` overrides where the first page's
 * strip is said to be; `pages` adds further pages (each width x height, one colour).
 */
export function makeTiff(width: number, height: number, colour: [number, number, number], options: { stripOffset?: number; pages?: Array<[number, number, number]> } = {}): Buffer {
  const colours = [colour, ...(options.pages ?? [])];
  const pixelBytes = width * height * 3;
  const entryCount = 9;
  const ifdSize = 2 + entryCount * 12 + 4;
  const pageSize = ifdSize + pixelBytes; // each page: its IFD, then its strip
  const parts: Buffer[] = [];
  const header = Buffer.alloc(8);
  header.write('II', 0, 'latin1');
  header.writeUInt16LE(42, 2);
  header.writeUInt32LE(8, 4);
  parts.push(header);
  colours.forEach((pageColour, page) => {
    const ifdOffset = 8 + page * pageSize;
    const dataOffset = ifdOffset + ifdSize;
    const entries: Array<[number, number, number, number]> = [
      [256, 4, 1, width], // ImageWidth
      [257, 4, 1, height], // ImageLength
      [258, 3, 1, 8], // BitsPerSample (8; count 1 is accepted for all samples by libtiff)
      [259, 3, 1, 1], // Compression: none
      [262, 3, 1, 2], // Photometric: RGB
      [273, 4, 1, page === 0 ? options.stripOffset ?? dataOffset : dataOffset], // StripOffsets
      [277, 3, 1, 3], // SamplesPerPixel
      [278, 4, 1, height], // RowsPerStrip
      [279, 4, 1, pixelBytes], // StripByteCounts
    ];
    const ifd = Buffer.alloc(ifdSize);
    ifd.writeUInt16LE(entries.length, 0);
    entries.forEach(([tag, type, count, value], i) => {
      const at = 2 + i * 12;
      ifd.writeUInt16LE(tag, at);
      ifd.writeUInt16LE(type, at + 2);
      ifd.writeUInt32LE(count, at + 4);
      if (type === 3) ifd.writeUInt16LE(value, at + 8);
      else ifd.writeUInt32LE(value, at + 8);
    });
    ifd.writeUInt32LE(page + 1 < colours.length ? ifdOffset + pageSize : 0, 2 + entries.length * 12); // next IFD
    const pixels = Buffer.alloc(pixelBytes);
    for (let i = 0; i < width * height; i++) pixels.set(pageColour, i * 3);
    parts.push(ifd, pixels);
  });
  return Buffer.concat(parts);
}

/** The JPEG with an EXIF APP1 segment holding only the orientation tag (1..8). */
export function withExifOrientation(jpeg: Buffer, orientation: number): Buffer {
  const tiff = Buffer.alloc(8 + 2 + 12 + 4);
  tiff.write('II', 0, 'latin1');
  tiff.writeUInt16LE(42, 2);
  tiff.writeUInt32LE(8, 4);
  tiff.writeUInt16LE(1, 8); // one entry
  tiff.writeUInt16LE(0x0112, 10); // Orientation
  tiff.writeUInt16LE(3, 12); // SHORT
  tiff.writeUInt32LE(1, 14);
  tiff.writeUInt16LE(orientation, 18);
  tiff.writeUInt32LE(0, 22); // no next IFD
  const payload = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xffe1, 0);
  segment.writeUInt16BE(payload.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), segment, payload, jpeg.subarray(2)]);
}

/** Inserts a PNG chunk right after IHDR (e.g. an iCCP with a broken profile). */
export function withPngChunk(png: Buffer, type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  const ihdrEnd = 8 + 8 + 13 + 4;
  return Buffer.concat([png.subarray(0, ihdrEnd), head, data, crc, png.subarray(ihdrEnd)]);
}

/** Mean of each RGBA channel over the image. */
export function channelMeans(image: Decoded): Rgba {
  const sums = [0, 0, 0, 0];
  for (let i = 0; i < image.data.length; i += 4) for (let c = 0; c < 4; c++) sums[c]! += image.data[i + c]!;
  const n = image.width * image.height;
  return sums.map((s) => s / n) as Rgba;
}
