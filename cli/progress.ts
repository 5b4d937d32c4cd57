// Progress of a batch: on a terminal one line on stderr redrawn in place (a bar, done/total, the
// failures so far), with each failure printed above it; otherwise (a pipe, a log, CI) one plain
// line per file, or, with `every` (bucket work, a pod's log), one line per `every` inputs: how many
// are done, already done, failed, the rate and the time left. With --json nothing is printed per
// file (the JSON at the end says everything). The total may be learnt late (a bucket's listing is
// counted while the batch runs): until then the bar and the lines show `?`.
export interface FileOutcome {
  input: string;
  output?: string;
  ok: boolean;
  /** Already done by an earlier run (its result carries the marker): not redone. */
  skipped?: boolean;
  error?: { code: string; message: string; path?: string };
  width?: number;
  height?: number;
  bytes?: number;
  ms?: number;
}

export interface Progress {
  done(outcome: FileOutcome, line: string): void;
  total(total: number): void;
  finish(): void;
}

export interface ProgressOptions {
  json: boolean;
  stream?: NodeJS.WriteStream;
  /** Off a terminal: a line per this many inputs instead of a line per file. */
  every?: number;
  /** What the inputs are called in those lines ("objects", "files"). */
  noun?: string;
  now?: () => number;
}

/** "1h02m", "3m07s", "12s". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

export function createProgress(initialTotal: number | undefined, options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr;
  const now = options.now ?? (() => performance.now());
  let total = initialTotal;
  let completed = 0;
  let failed = 0;
  let skipped = 0;
  if (options.json) return { done: () => {}, total: () => {}, finish: () => {} };

  if (!stream.isTTY && options.every !== undefined) {
    const every = options.every;
    const started = now();
    const noun = options.noun ?? 'files';
    const report = () => {
      const seconds = (now() - started) / 1000;
      const worked = completed - skipped; // inputs that ran (or failed): what the rate is about
      const rate = seconds > 0 ? worked / seconds : 0;
      const eta = total === undefined ? '?' : total - completed <= 0 ? '0s' : rate > 0 ? formatDuration((total - completed) / rate) : '?';
      process.stdout.write(`matte: ${completed}/${total ?? '?'} ${noun}, ${completed - skipped - failed} done, ${skipped} already done, ${failed} failed, ${rate.toFixed(1)}/s, eta ${eta}\n`);
    };
    let lastReported = 0;
    return {
      done(outcome, line) {
        completed += 1;
        if (outcome.skipped) skipped += 1;
        if (!outcome.ok) {
          failed += 1;
          stream.write(`${line}\n`);
        }
        if (completed % every === 0) {
          lastReported = completed;
          report();
        }
      },
      total(n) {
        total = n;
      },
      finish() {
        if (lastReported !== completed || completed === 0) report();
      },
    };
  }

  if (!stream.isTTY) {
    return {
      done(outcome, line) {
        (outcome.ok ? process.stdout : stream).write(`${line}\n`);
      },
      total() {},
      finish() {},
    };
  }

  const draw = (current = '') => {
    const columns = stream.columns || 80; // 0 on a terminal that does not say
    const width = Math.max(10, Math.min(30, columns - 50));
    const filled = total ? Math.round((Math.min(completed, total) / total) * width) : 0;
    const bar = `${'#'.repeat(filled)}${'-'.repeat(width - filled)}`;
    const failures = failed ? `, ${failed} failed` : '';
    const already = skipped ? `, ${skipped} already done` : '';
    const tail = current ? `  ${current}` : '';
    const text = `[${bar}] ${completed}/${total ?? '?'}${already}${failures}${tail}`;
    stream.write(`\r\x1b[K${text.slice(0, columns - 1)}`);
  };
  draw();
  return {
    done(outcome, line) {
      completed += 1;
      if (outcome.skipped) skipped += 1;
      if (!outcome.ok) {
        failed += 1;
        stream.write(`\r\x1b[K${line}\n`);
      }
      draw(outcome.ok ? outcome.input : '');
    },
    total(n) {
      total = n;
      draw();
    },
    finish() {
      stream.write('\r\x1b[K');
    },
  };
}
