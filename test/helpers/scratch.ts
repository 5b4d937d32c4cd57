// A temporary directory for one suite: made before its first test, removed with everything in it
// after its last. `use` receives the path (suites keep it in a `let`).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'uvu';

export function scratchDir(suite: Test, prefix: string, use: (path: string) => void): void {
  let path = '';
  suite.before(async () => {
    path = await mkdtemp(join(tmpdir(), prefix));
    use(path);
  });
  suite.after(() => rm(path, { recursive: true, force: true }));
}
