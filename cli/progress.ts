// Progress of a batch: on a terminal one line on stderr redrawn in place (a bar, done/total, the
// failures so far), with each failure printed above it; otherwise (a pipe, a log, CI) one plain
// line per file. With --json nothing is printed per file (the JSON at the end says everything).
export interface FileOutcome {
  input: string;
  output?: string;
  ok: boolean;
  error?: { code: string; message: string; path?: string };
  width?: number;
  height?: number;
  bytes?: number;
  ms?: number;
}

export interface Progress {
  done(outcome: FileOutcome, line: string): void;
  finish(): void;
}

export function createProgress(total: number, options: { json: boolean; stream?: NodeJS.WriteStream }): Progress {
  const stream = options.stream ?? process.stderr;
  let completed = 0;
  let failed = 0;
  if (options.json) return { done: () => {}, finish: () => {} };

  if (!stream.isTTY) {
    return {
      done(outcome, line) {
        (outcome.ok ? process.stdout : stream).write(`${line}\n`);
      },
      finish() {},
    };
  }

  const draw = (current = '') => {
    const columns = stream.columns || 80; // 0 on a terminal that does not say
    const width = Math.max(10, Math.min(30, columns - 50));
    const filled = Math.round((completed / total) * width);
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    const failures = failed ? `, ${failed} failed` : '';
    const tail = current ? `  ${current}` : '';
    const text = `[${bar}] ${completed}/${total}${failures}${tail}`;
    stream.write(`\r\x1b[K${text.slice(0, columns - 1)}`);
  };
  draw();
  return {
    done(outcome, line) {
      completed += 1;
      if (!outcome.ok) {
        failed += 1;
        stream.write(`\r\x1b[K${line}\n`);
      }
      draw(outcome.ok ? outcome.input : '');
    },
    finish() {
      stream.write('\r\x1b[K');
    },
  };
}
