// Bulk work (`npm run bench -- --only=bulk`): `matte remove-background s3://bench/raw/ -o
// s3://bench/out-N/` in one process against s3rver on loopback (listing, download, job, upload and
// marker), against lib/ called on the same images held in memory with the same number of jobs.
// s3rver runs in this process, on the same cores: a real store would not take them.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { INPUTS, ROOT, runWorker } from './common.js';
import { INPUT_FILES } from './pipelines.js';
import { startTestS3 } from '../test/helpers/s3.js';

export interface BulkRound {
  images: number;
  seconds: number;
  perSecond: number;
}

export interface BulkResult {
  model: string;
  jobs: number;
  images: number;
  lib: BulkRound[];
  command: BulkRound[];
  /** Pooled: images over seconds of every round. */
  libPerSecond: number;
  commandPerSecond: number;
  ratio: number;
}

function runCommand(args: string[], env: Record<string, string>): Promise<{ total: number; failed: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...args], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`matte ${args.join(' ')} exited with ${code}: ${stderr.trim()}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

const pooled = (rounds: BulkRound[]) => rounds.reduce((n, r) => n + r.images, 0) / rounds.reduce((s, r) => s + r.seconds, 0);

export async function runBulk(options: { model: string; copies: number; rounds: number }, log: (line: string) => void): Promise<BulkResult> {
  const jobs = availableParallelism();
  const sources = [INPUT_FILES.lenna, INPUT_FILES.small];
  const files = Array.from({ length: options.copies }, (_, i) => sources[i % sources.length]!);
  const s3 = await startTestS3('bench');
  try {
    for (const [i, file] of files.entries()) {
      await s3.client.send(new PutObjectCommand({ Bucket: 'bench', Key: `raw/${String(i).padStart(3, '0')}-${file}`, Body: readFileSync(join(INPUTS, file)) }));
    }
    const env = { MATTE_S3_ENDPOINT: s3.endpoint, MATTE_S3_FORCE_PATH_STYLE: '1', AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
    const lib: BulkRound[] = [];
    const command: BulkRound[] = [];
    const libRound = async () => {
      const r = await runWorker<BulkRound>('lib-batch', { model: options.model, files, jobs, warmup: jobs * 2 });
      lib.push({ images: r.images, seconds: r.seconds, perSecond: r.perSecond });
      log(`  lib/ in memory, ${jobs} jobs: ${r.images} images in ${r.seconds.toFixed(2)} s, ${r.perSecond.toFixed(2)}/s`);
    };
    const commandRound = async () => {
      const out = `out-${command.length}/`;
      const r = await runCommand(['remove-background', 's3://bench/raw/', '-o', `s3://bench/${out}`, '--model', options.model, '--jobs', String(jobs), '--json'], env);
      if (r.failed || r.total !== files.length) throw new Error(`the bulk run did ${r.total - r.failed} of ${files.length}`);
      command.push({ images: r.total, seconds: r.seconds, perSecond: r.total / r.seconds });
      log(`  matte remove-background s3:// -> s3://, --jobs ${jobs}: ${r.total} objects in ${r.seconds.toFixed(2)} s, ${(r.total / r.seconds).toFixed(2)}/s`);
    };
    for (let round = 0; round < options.rounds; round++) {
      if (round % 2 === 0) {
        await libRound();
        await commandRound();
      } else {
        await commandRound();
        await libRound();
      }
    }
    const libPerSecond = pooled(lib);
    const commandPerSecond = pooled(command);
    return { model: options.model, jobs, images: files.length, lib, command, libPerSecond, commandPerSecond, ratio: commandPerSecond / libPerSecond };
  } finally {
    await s3.close();
  }
}
