// One side of score.ts's A/B comparison (--baseline): a process that loads one build of the addon
// (MATTE_ADDON_PATH, or this checkout's) and runs the background removals it is sent, one JSON
// line each on stdin ({"file", "model", "refine"}), answering each with a JSON line: the job's CPU
// time (process.cpuUsage: the addon's threads included) and wall time, the inferences it ran, and,
// when asked for ("output"), where it wrote the cut-out. Two of these, one per build, are sent the
// same jobs in turn, so the load of a shared machine falls on both alike.
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { configure, removeBackground } from '../../lib/index.js';
import { addon } from '../../lib/native.js';

interface Job {
  file: string;
  model: string;
  refine: boolean;
  output?: string;
}

const inferences = () => (addon as unknown as { counters: () => { inferencesPooled: number } }).counters().inferencesPooled;

configure({ concurrency: 1 });
for await (const line of createInterface({ input: process.stdin })) {
  const job = JSON.parse(line) as Job;
  const input = readFileSync(job.file);
  const before = inferences();
  const cpu = process.cpuUsage();
  const start = performance.now();
  // No deadline: a measurement on a loaded machine must not stop half-way.
  const out = await removeBackground(input, { model: job.model, refine: job.refine, timeout: 0 });
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  if (job.output) writeFileSync(job.output, out.data);
  process.stdout.write(JSON.stringify({ cpuMs: (used.user + used.system) / 1000, wallMs, inferences: inferences() - before }) + '\n');
}
