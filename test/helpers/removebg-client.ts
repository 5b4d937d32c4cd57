// remove.bg's official Node client run against matte in a child process (removebg-client-child.ts):
// its code is the package's, unchanged; only its environment differs. HTTPS_PROXY sends its
// https://api.remove.bg through the test front's CONNECT proxy (removebg-client-proxy.ts, preloaded,
// makes its uploads take it too), NODE_EXTRA_CA_CERTS trusts the front's test CA. Nothing of the
// parent's environment leaks in.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { RemoveBgFront } from './removebg-front.js';

const CHILD = fileURLToPath(new URL('./removebg-client-child.js', import.meta.url));
const PROXY = new URL('./removebg-client-proxy.js', import.meta.url).href;

export type ClientCall = 'removeBackgroundFromImageFile' | 'removeBackgroundFromImageUrl' | 'removeBackgroundFromImageBase64';
export type ClientOutcome = { ok: true; result: Record<string, unknown> } | { ok: false; errors: unknown };

export function runClient(front: RemoveBgFront, call: ClientCall, options: Record<string, unknown>): Promise<ClientOutcome> {
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', HTTPS_PROXY: front.proxyUrl, NODE_EXTRA_CA_CERTS: front.caPath, NODE_NO_WARNINGS: '1' };
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', PROXY, CHILD, JSON.stringify({ call, options })], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const line = stdout.trim().split('\n').pop();
      if (!line) return reject(new Error(`the client printed nothing (${err?.message ?? 'no error'}): ${stderr}`));
      resolve(JSON.parse(line) as ClientOutcome);
    });
  });
}
