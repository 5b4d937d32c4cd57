// Hostile-but-valid test images written byte by byte (no binaries committed): shapes and sample
// layouts that the usual encoders of the tests do not make, compressed so they stay small.
import zlib from 'node:zlib';

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** A PNG chunk: length, type, data and its CRC. */
export function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit greyscale PNG of any shape, every pixel `grey` (e.g. 1 x 4194305: a few KB). */
export function greyPng(width: number, height: number, grey = 128): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // colour type: greyscale
  const row = Buffer.alloc(1 + width, grey);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A TIFF of `samples` float32 samples per pixel, all zero, deflate-compressed in strips of 16 rows
 * (3000 x 3000 x 16 samples: 576 MB decoded, about 600 KB on disk).
 */
export function floatTiff(width: number, height: number, samples: number): Buffer {
  const rowsPerStrip = 16;
  const strips = Math.ceil(height / rowsPerStrip);
  const stripBytes = rowsPerStrip * width * samples * 4;
  // Every strip holds zeros, so one compressed strip serves for all (the last one is shorter but
  // libtiff only reads what it needs).
  const compressed = zlib.deflateSync(Buffer.alloc(stripBytes), { level: 9 });
  const entries: Array<[number, number, number, number | number[]]> = [
    [256, 4, 1, width],
    [257, 4, 1, height],
    [258, 3, samples, new Array(samples).fill(32)], // BitsPerSample
    [259, 3, 1, 8], // Compression: deflate
    [262, 3, 1, 1], // Photometric: min-is-black
    [273, 4, strips, []], // StripOffsets (filled below)
    [277, 3, 1, samples], // SamplesPerPixel
    [278, 4, 1, rowsPerStrip],
    [279, 4, strips, new Array(strips).fill(compressed.length)], // StripByteCounts
    [284, 3, 1, 1], // PlanarConfiguration: contiguous
    [338, 3, samples - 1, new Array(samples - 1).fill(0)], // ExtraSamples: unspecified
    [339, 3, samples, new Array(samples).fill(3)], // SampleFormat: IEEE float
  ];
  const ifdOffset = 8;
  const ifdSize = 2 + entries.length * 12 + 4;
  // Arrays that do not fit in the entry's 4 bytes follow the IFD, then the strips.
  let extra = ifdOffset + ifdSize;
  const arrays: Array<{ at: number; entry: number }> = [];
  entries.forEach(([, type, count], i) => {
    const size = (type === 3 ? 2 : 4) * count;
    if (size > 4) {
      arrays.push({ at: extra, entry: i });
      extra += size;
    }
  });
  const dataStart = extra;
  entries[5]![3] = Array.from({ length: strips }, (_, i) => dataStart + i * compressed.length);
  if (strips === 1) entries[5]![3] = dataStart;
  const head = Buffer.alloc(dataStart);
  head.write('II', 0, 'latin1');
  head.writeUInt16LE(42, 2);
  head.writeUInt32LE(ifdOffset, 4);
  head.writeUInt16LE(entries.length, ifdOffset);
  entries.forEach(([tag, type, count, value], i) => {
    const at = ifdOffset + 2 + i * 12;
    head.writeUInt16LE(tag, at);
    head.writeUInt16LE(type, at + 2);
    head.writeUInt32LE(count, at + 4);
    const array = arrays.find((a) => a.entry === i);
    const values = Array.isArray(value) ? value : [value];
    if (array) {
      head.writeUInt32LE(array.at, at + 8);
      values.forEach((v, k) => (type === 3 ? head.writeUInt16LE(v, array.at + 2 * k) : head.writeUInt32LE(v, array.at + 4 * k)));
    } else {
      values.forEach((v, k) => (type === 3 ? head.writeUInt16LE(v, at + 8 + 2 * k) : head.writeUInt32LE(v, at + 8 + 4 * k)));
    }
  });
  head.writeUInt32LE(0, ifdOffset + 2 + entries.length * 12); // no next IFD
  return Buffer.concat([head, ...new Array(strips).fill(compressed)]);
}
