// Which native addon this process loads, and a clear message when none can be loaded.
//
// The order, as sharp and esbuild do it: MATTE_ADDON_PATH (an exact file: a sanitizer build, a
// custom build), then the prebuilt platform package (an optional dependency that npm installs only
// on the platform it was built for: package.json os/cpu/libc), then a local source build in
// build/Release (a git checkout, or a platform without a prebuilt package). Nothing is compiled
// here; scripts/install.cjs builds from source at install time when it has to.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The system libvips matte runs on: its Debian/Ubuntu runtime package and the oldest version. */
export const LIBVIPS_PACKAGE = 'libvips42';
export const LIBVIPS_MINIMUM = '8.14';

/** `linux-x64-gnu`, `linux-arm64-musl`, `darwin-arm64`, ...: the suffix of the platform package. */
export function platformId(): string {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  const libc = process.platform === 'linux' ? (report?.header?.glibcVersionRuntime ? '-gnu' : '-musl') : '';
  return `${process.platform}-${process.arch}${libc}`;
}

/** Platforms with a prebuilt package (packages/<id>/ in the repository). */
export const PREBUILT_PLATFORMS = ['linux-x64-gnu', 'linux-arm64-gnu'];

export function platformPackage(id = platformId()): string {
  return `@matte/${id}`;
}

/** Where the addon would be found, in the order tried, with where each candidate comes from. */
export function addonCandidates(): Array<{ path: string; from: string }> {
  const candidates: Array<{ path: string; from: string }> = [];
  const explicit = process.env.MATTE_ADDON_PATH;
  if (explicit) return [{ path: explicit, from: 'MATTE_ADDON_PATH' }];
  try {
    const pkg = platformPackage();
    candidates.push({ path: require.resolve(`${pkg}/matte.node`), from: pkg });
  } catch {
    // Not installed: this platform has no prebuilt package, or optional dependencies were omitted.
  }
  for (const type of ['Release', 'Debug']) {
    const path = `${root}build/${type}/matte.node`;
    if (existsSync(path)) candidates.push({ path, from: `a source build (build/${type})` });
  }
  return candidates;
}

/** What to do when no addon exists for this platform. */
export function missingAddonMessage(): string {
  const id = platformId();
  const pkg = platformPackage(id);
  const prebuilt = PREBUILT_PLATFORMS.includes(id);
  // The headers are in the first package; a linux-arm64 library is in onnxruntime-node
  // (scripts/ort-paths.cjs).
  const ortPackages = process.arch === 'arm64' ? 'com.github.asus4.onnxruntime onnxruntime-node@1.30.0' : 'com.github.asus4.onnxruntime';
  return [
    `matte: no native addon for ${id}.`,
    prebuilt
      ? `The prebuilt package ${pkg} is not installed: reinstall without omitting optional dependencies (npm install matte --include=optional).`
      : `There is no prebuilt package for ${id} (prebuilt: ${PREBUILT_PLATFORMS.join(', ')}); build it from source:`,
    `To build from source: install libvips-dev (>= ${LIBVIPS_MINIMUM}), cmake, g++, make and patchelf ` +
      `(Debian/Ubuntu: sudo apt-get install libvips-dev cmake g++ make patchelf), ONNX Runtime's C headers and library ` +
      `(ORT_ROOT=/path/to/onnxruntime, or npm install ${ortPackages}), then ` +
      `npm install cmake-js node-addon-api && npm rebuild matte.`,
  ].join('\n');
}

/** Turns a dynamic-loader failure into what the user has to install. */
export function loadFailureMessage(path: string, from: string, err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  // The addon's own start-up check (native/libvips.cc) already says what to do.
  if (text.startsWith('matte: ')) return text;
  if (/libvips(-cpp)?\.so\.\d+: cannot open shared object file/.test(text)) {
    return (
      `matte needs the system libvips (>= ${LIBVIPS_MINIMUM}) at run time, and none is installed. ` +
      `Debian/Ubuntu: sudo apt-get install --no-install-recommends ${LIBVIPS_PACKAGE}`
    );
  }
  if (/undefined symbol: vips_/.test(text)) {
    return `matte needs libvips ${LIBVIPS_MINIMUM} or newer; the system's is older (${text.split('\n')[0]}). Install a newer ${LIBVIPS_PACKAGE}.`;
  }
  if (/GLIBC_[\d.]+' not found|GLIBCXX_[\d.]+' not found/.test(text)) {
    return `matte's addon from ${from} needs a newer C library than this system has (${text.split('\n')[0]}): build it from source.\n${missingAddonMessage()}`;
  }
  return `matte: the native addon ${path} (from ${from}) failed to load: ${text}`;
}
