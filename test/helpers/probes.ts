// The probes build of the addon (matte_probes.node, native/probes/: built by scripts/setup.sh,
// never packed): the product's exports plus infer and encodePng, which tests and benches measure
// with. A process loads one build of the addon, so this module makes the probes build *the* addon
// of lib/: import it before any module that loads lib/ (ES modules run in the order they are
// imported). It sits beside whichever build lib/ would load (MATTE_ADDON_PATH, e.g. the ASan build,
// or build/Release).
import { dirname, join } from 'node:path';
import { addonCandidates } from '../../lib/platform.js';
import type { Addon, NativeModel } from '../../lib/native.js';

const PROBES_FILE = 'matte_probes.node';

const [chosen] = addonCandidates();
if (chosen && !chosen.path.endsWith(PROBES_FILE)) process.env.MATTE_ADDON_PATH = join(dirname(chosen.path), PROBES_FILE);

export interface Probes extends Addon {
  /** The model alone on a normalised planar (1x3xHxW) tensor: its post-processed matte, 8-bit, at the model's input size. */
  infer(model: NativeModel, chw: Float32Array): Promise<{ data: Buffer; width: number; height: number }>;
  /** The PNG encoder alone on raw 8-bit pixels (native/probes/png_probe.h); `libvips: true` writes libvips' pngsave instead. */
  encodePng(pixels: Buffer, width: number, height: number, bands: number, options?: { threads?: number; stripeBytes?: number; libvips?: boolean }): Buffer;
  /** A thumbnail's codec floor (native/probes/codec_floor.h): the JPEG's decode at 1/shrink and the encode of a width x height image, median CPU ms of this thread. */
  codecFloor(
    jpeg: Buffer,
    options: { shrink: 1 | 2 | 4 | 8 | number; width: number; height: number; format: 'jpeg' | 'webp'; quality: number; runs?: number },
  ): { decodeMs: number; encodeMs: number; decodedWidth: number; decodedHeight: number; bytes: number };
}

const { addon } = await import('../../lib/native.js');
if (typeof (addon as Partial<Probes>).infer !== 'function' || typeof (addon as Partial<Probes>).encodePng !== 'function') {
  throw new Error(`the addon lib/ loaded is not the probes build (${PROBES_FILE}): import test/helpers/probes.js before anything that loads lib/, and build it with sh scripts/setup.sh`);
}

/** The addon lib/ uses, as the probes build it is here. */
export const probes = addon as Probes;
