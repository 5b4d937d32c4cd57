// The fuzzer's seed images: one or more of every accepted input type, made at run time by the
// test helpers and the addon itself (nothing binary is committed). Tiny on purpose: a mutation then
// reaches every part of the file, and an iteration takes milliseconds.
import { tiledTiff } from '../helpers/declared-small.js';
import { encodeHeic } from '../helpers/heic.js';
import { convert, disc, gradient, makeGif, makeTiff, solid, withExifOrientation } from '../helpers/images.js';

export interface Seed {
  name: string;
  data: Buffer;
}

export async function makeSeeds(): Promise<Seed[]> {
  const rgb = gradient(16, 12);
  const rgba = disc(20, 20, 7, [200, 30, 30, 255], [0, 0, 0, 0]);
  const animated = makeGif(12, 10, [[255, 0, 0], [0, 255, 0], [0, 0, 255]], { delay: 50 });
  const jpeg = await convert(rgb, 'jpeg', { quality: 70 });
  const avif = await convert(rgba, 'avif', { quality: 40 });
  return [
    { name: 'png-rgb', data: rgb },
    { name: 'png-rgba', data: rgba },
    { name: 'png-1x1', data: solid(1, 1, [1, 2, 3]) },
    { name: 'jpeg', data: jpeg },
    { name: 'jpeg-exif', data: withExifOrientation(jpeg, 6) },
    { name: 'webp-lossy', data: await convert(rgb, 'webp', { quality: 50 }) },
    { name: 'webp-alpha', data: await convert(rgba, 'webp', { quality: 50 }) },
    { name: 'webp-animated', data: await convert(animated, 'webp', { quality: 50 }) },
    { name: 'gif', data: makeGif(10, 8, [[10, 200, 90]]) },
    { name: 'gif-animated', data: animated },
    { name: 'tiff-2-pages', data: makeTiff(8, 6, [255, 128, 0], { pages: [[0, 128, 255]] }) },
    { name: 'tiff-tiled', data: tiledTiff({ width: 20, height: 12, tileWidth: 16, tileHeight: 16 }) },
    { name: 'avif', data: avif },
    // The same AV1 image under the generic HEIF brand (libheif decides by the item, the sniffer
    // by the brand).
    { name: 'heif-mif1', data: withBrand(avif, 'mif1') },
    // HEVC: a grid of one 64x64 tile with an alpha item (below 64x64), and one item.
    { name: 'heic-alpha', data: encodeHeic(rgba, 40) },
    { name: 'heic', data: encodeHeic(gradient(64, 64), 40) },
  ];
}

/** The file with its ftyp major brand replaced. */
function withBrand(isobmff: Buffer, brand: string): Buffer {
  const out = Buffer.from(isobmff);
  out.write(brand, 8, 'latin1');
  return out;
}
