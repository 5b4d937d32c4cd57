// How the command reports a failure: one line on stderr (`matte: ...`), never a stack trace, and
// with --json the same error as the HTTP API's body on stdout ({"error": {code, message, path?}}).
import { MatteError } from '../lib/index.js';

/** A failure the user caused or can fix (bad arguments, a missing file); exits with 1. */
export class CliError extends Error {
  readonly code: string;
  readonly path?: string;
  constructor(message: string, code = 'usage', path?: string) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    if (path !== undefined) this.path = path;
  }
}

/** The first line of an error's message (a child process's message may carry its whole stderr). */
export function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n').map((line) => line.trim()).find(Boolean) ?? 'unknown error';
}

export function errorBody(err: unknown): { error: { code: string; message: string; path?: string } } {
  const code = err instanceof MatteError || err instanceof CliError ? err.code : 'internal';
  const path = err instanceof MatteError || err instanceof CliError ? err.path : undefined;
  return { error: { code, message: describe(err), ...(path !== undefined ? { path } : {}) } };
}

/** The exit code of a batch the store failed (at its start or part-way): running it again may finish it. */
export const EXIT_STOPPED = 3;
const STORE_FAILURES = new Set(['batch_stopped', 'store_unavailable']);

/** Prints the error (one line, and its JSON form with --json) and returns the exit code. */
export function report(err: unknown, json: boolean): number {
  if (json) process.stdout.write(`${JSON.stringify(errorBody(err))}\n`);
  const code = err instanceof MatteError ? ` (${err.code})` : '';
  process.stderr.write(`matte: ${describe(err)}${code}\n`);
  if (process.env.MATTE_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return err instanceof CliError && STORE_FAILURES.has(err.code) ? EXIT_STOPPED : 1;
}

/** A file system error in words: "no such file", "permission denied", ... */
export function fsReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EEXIST':
      return 'already exists (use --force to overwrite)';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'EROFS':
      return 'read-only file system';
    case 'ENAMETOOLONG':
      return 'the name is too long for the file system';
    default:
      return code ?? describe(err);
  }
}
