// Runs sharp (its own libvips, lcms and decoders) in a child process, as the independent reference
// of the colour and real-world suites: it makes inputs matte cannot write (CMYK JPEG, 16-bit PNG,
// multi-page TIFF, animated WebP) and decodes, resizes and converts inputs the way sharp's users
// see them. sharp never shares a process with matte's addon (two libvips in one process crash),
// so the chains are described as data and run here:
//
//   node dist/test/helpers/sharp-chain.js JOBS.json   -> prints one JSON array of sharp's info
//
// A job is {input, options?, chain, output}: `input` a file (or, with options.raw, a file of raw
// samples whose type options.depth names), `chain` the sharp methods to call in order with their
// arguments, `output` the file written (raw samples when the chain ends in ['raw']).
import { readFile, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { uninstrumentedEnv } from './uninstrumented-env.js';

export interface SharpJob {
  input: string;
  options?: Record<string, unknown> & { depth?: 'uchar' | 'ushort' };
  chain: Array<[string, ...unknown[]]>;
  output: string;
}

export interface SharpInfo {
  width: number;
  height: number;
  channels: number;
  pages?: number;
  pageHeight?: number;
}

const CHILD = fileURLToPath(import.meta.url);

/** Runs the jobs in one sharp child process; returns sharp's info for each output. */
export async function runSharp(jobs: SharpJob[], scratch: string): Promise<SharpInfo[]> {
  const file = `${scratch}/sharp-jobs-${process.pid}-${Date.now()}.json`;
  await writeFile(file, JSON.stringify(jobs));
  const { stdout } = await promisify(execFile)(process.execPath, [CHILD, file], { maxBuffer: 16 << 20, env: uninstrumentedEnv() });
  return JSON.parse(stdout) as SharpInfo[];
}

async function main(jobsFile: string): Promise<void> {
  const { default: sharp } = await import('sharp');
  const jobs = JSON.parse(await readFile(jobsFile, 'utf8')) as SharpJob[];
  const infos: SharpInfo[] = [];
  for (const job of jobs) {
    const { depth, ...options } = job.options ?? {};
    let input: Buffer | Uint16Array = await readFile(job.input);
    if (depth === 'ushort') input = new Uint16Array(input.buffer, input.byteOffset, input.length / 2);
    let pipeline: any = sharp(input, { limitInputPixels: false, ...options });
    for (const [method, ...args] of job.chain) pipeline = pipeline[method](...args);
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    await writeFile(job.output, data);
    infos.push({ width: info.width, height: info.height, channels: info.channels, pages: info.pages, pageHeight: info.pageHeight });
  }
  process.stdout.write(JSON.stringify(infos));
}

if (process.argv[1] === CHILD) {
  main(process.argv[2]!).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
