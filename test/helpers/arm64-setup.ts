// What scripts/setup-arm64.sh makes (the arm64 sysroot and Node under MATTE_ARM64_DIR, the cross
// build in build-arm64) is used by the arm64 test and by any `pack.mjs --no-build`, which packs
// build-arm64's addon when there is one. .ci/run runs the set-up beside the suite, holding a lock
// in that directory while it works: a test waits for the lock before it looks at what it makes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const ARM64_DIR = process.env.MATTE_ARM64_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'matte', 'arm64');

/** Returns once no scripts/setup-arm64.sh is running (at once when it never ran here). */
export function waitForArm64Setup(): void {
  if (!existsSync(ARM64_DIR)) return;
  const waited = spawnSync('flock', ['--shared', join(ARM64_DIR, '.lock'), 'true'], { timeout: 45 * 60_000 });
  if (waited.status !== 0) throw new Error(`waiting for scripts/setup-arm64.sh: ${waited.error?.message ?? waited.stderr}`);
}
