// Runs the real `matte` command (dist/cli/main.js) in a child process and collects its output.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MATTE_BIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MATTE_BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The lines of a stream's text, without the empty last one. */
export const lines = (text: string) => text.split('\n').filter((l) => l !== '');
