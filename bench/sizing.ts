// The server's resident memory for docs/deploy.md's sizing table: `node dist/bench/sizing.js MODEL`.
// Starts the server as `npm start` does with MATTE_MODELS=MODEL, and prints VmRSS/VmHWM (MiB) after
// /readyz, after one remove-background of a 1200x900 JPEG (the bench photo, resized), and after two
// at once, twice. Needs the bench's inputs (`npm run bench` makes them) and the model fetched.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { INPUTS, OUT, ROOT } from './common.js';

const model = process.argv[2] ?? 'u2netp';
const photo = join(INPUTS, 'photo-4000x3000.jpg');
const input = join(OUT, 'sizing-1200x900.jpg');
if (!existsSync(photo)) throw new Error(`${photo} is missing: run npm run bench once`);
if (!existsSync(input)) {
  const cli = join(ROOT, 'dist', 'cli', 'main.js');
  execFileSync(process.execPath, [cli, 'edit', photo, '--op', '{"resize":{"width":1200,"height":900}}', '--format', 'jpeg', '-o', input], { stdio: 'inherit' });
}

const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address() as { port: number };
    probe.close(() => resolve(port));
  });
});
const key = 'sizing';
const server = spawn(process.execPath, [join(ROOT, 'dist', 'server', 'main.js')], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', MATTE_API_KEYS: key, MATTE_MODELS: model, MATTE_LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;

function memory(): { rss: number; hwm: number } {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)![1]);
  return { rss: Math.round(kib('VmRSS') / 1024), hwm: Math.round(kib('VmHWM') / 1024) };
}

async function ready(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the server did not become ready in 120 s');
}

const bytes = readFileSync(input);
async function removeBackground(): Promise<void> {
  const form = new FormData();
  form.append('input', new Blob([bytes]), 'input.jpg');
  form.append('output', 'raw');
  const response = await fetch(`${base}/images/remove-background`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`remove-background answered ${response.status}`);
}

try {
  await ready();
  const idle = memory();
  await removeBackground();
  const afterOne = memory();
  await Promise.all([removeBackground(), removeBackground()]);
  const afterTwo = memory();
  await Promise.all([removeBackground(), removeBackground()]);
  const afterTwoAgain = memory();
  console.log(JSON.stringify({ model, idle, afterOne, afterTwo, afterTwoAgain }));
} finally {
  server.kill('SIGTERM');
}
