// Small C++ programs built against the system libvips for the tests that need libvips without matte:
// a reference encoder to compare with, or a race reproduced with libvips alone. They are not matte,
// so they build and run in uninstrumentedEnv() even under test:asan.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { uninstrumentedEnv } from './uninstrumented-env.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../', import.meta.url));

/**
 * Compiles `sources` (paths from the repository's root) into `program`, linked to libvips' C API
 * (`vips`) or its C++ API (`vips-cpp`).
 */
export async function buildLibvipsProgram(program: string, sources: string[], library: 'vips' | 'vips-cpp'): Promise<void> {
  const files = sources.map((s) => `"${join(root, s)}"`).join(' ');
  await run('sh', ['-c', `g++ -O1 -o "${program}" ${files} $(pkg-config --cflags --libs ${library}) -pthread -ldl`], { env: uninstrumentedEnv() });
}

/**
 * Why a test whose only work is such a program is left to the normal pass: under test:asan the
 * program is the same uninstrumented build, so a second run gives ASan nothing to check. Undefined
 * in the normal pass.
 */
export function programLeftToNormalPass(): string | undefined {
  return process.env.MATTE_SANITIZER_LOG_DIR ? 'the ASan pass would run the same uninstrumented program again' : undefined;
}
