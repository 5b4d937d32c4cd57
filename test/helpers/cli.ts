// Runs the real `matte` command (dist/cli/main.js) in a child process and collects its output.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MATTE_BIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  /** stdout as bytes, for a result written to `-`. */
  stdoutBytes: Buffer;
  stderr: string;
}

export function runCli(args: string[], options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number; stdin?: Buffer } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MATTE_BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    if (options.stdin) child.stdin!.end(options.stdin);
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code, stdout: stdoutBytes.toString('utf8'), stdoutBytes, stderr });
    });
  });
}

/** The lines of a stream's text, without the empty last one. */
export const lines = (text: string) => text.split('\n').filter((l) => l !== '');
