// score.ts's A/B comparison against an earlier build of the addon (--baseline=ADDON, built by
// bench/quality/baseline.sh): two worker processes (ab-worker.ts), this checkout's addon and the
// baseline's, sent the same jobs in turn, the order swapped from one job to the next.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface AbJob {
  file: string;
  model: string;
  refine: boolean;
  /** Where the worker writes the cut-out (PNG). */
  output?: string;
}

export interface AbResult {
  cpuMs: number;
  wallMs: number;
  inferences: number;
}

class Worker {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  private readonly reader: Interface;

  constructor(addonPath?: string) {
    const env = { ...process.env };
    if (addonPath) env.MATTE_ADDON_PATH = addonPath;
    else delete env.MATTE_ADDON_PATH;
    this.child = spawn(process.execPath, [fileURLToPath(new URL('./ab-worker.js', import.meta.url))], { env, stdio: 'pipe' });
    this.child.stderr.pipe(process.stderr);
    this.reader = createInterface({ input: this.child.stdout });
    this.lines = this.reader[Symbol.asyncIterator]();
  }

  async run(job: AbJob): Promise<AbResult> {
    this.child.stdin.write(JSON.stringify(job) + '\n');
    const next = await this.lines.next();
    if (next.done) throw new Error(`the A/B worker ended before answering ${job.file}`);
    return JSON.parse(next.value) as AbResult;
  }

  close(): void {
    this.reader.close();
    this.child.stdin.end();
  }
}

/** This checkout's addon and the baseline's, in two processes. */
export class AbPair {
  private readonly current = new Worker();
  private readonly baseline: Worker;
  private turn = 0;

  constructor(baselineAddon: string) {
    this.baseline = new Worker(baselineAddon);
  }

  /** The same job on both builds, one after the other; which goes first alternates. */
  async run(current: AbJob, baseline: AbJob): Promise<{ current: AbResult; baseline: AbResult }> {
    if (this.turn++ % 2 === 0) {
      const b = await this.baseline.run(baseline);
      return { baseline: b, current: await this.current.run(current) };
    }
    const c = await this.current.run(current);
    return { current: c, baseline: await this.baseline.run(baseline) };
  }

  close(): void {
    this.current.close();
    this.baseline.close();
  }
}
