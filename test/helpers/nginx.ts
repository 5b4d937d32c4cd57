// nginx for the tests that put it in front of the real server (test/server/nginx-cache,
// test/deploy/compose): one process (no master, no workers) whose files all live in the test's
// directory, listening on loopback only. The tests skip, with one line, where nginx is not installed.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { waitFor } from './wait.js';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** The main configuration around `http` (directives of nginx's http block): everything under dir. */
function mainConfiguration(dir: string, http: string): string {
  return `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http}
}
`;
}

/** `nginx -t` on that configuration: its exit status and what it printed. */
export async function checkNginx(dir: string, http: string): Promise<{ status: number | null; output: string }> {
  await writeFile(join(dir, 'nginx.conf'), mainConfiguration(dir, http));
  const result = spawnSync(NGINX!, ['-t', '-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

export interface RunningNginx {
  output(): string;
  stop(): Promise<void>;
}

/** Starts nginx with that configuration and waits until `port` (on 127.0.0.1) accepts connections. */
export async function startNginx(dir: string, http: string, port: number): Promise<RunningNginx> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'nginx.conf'), mainConfiguration(dir, http));
  const nginx: ChildProcess = spawn(NGINX!, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  nginx.stdout!.on('data', (d) => (log += d));
  nginx.stderr!.on('data', (d) => (log += d));
  const connects = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  await waitFor(() => `nginx listening on ${port}: ${log}`, async () => {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${log}`);
    return connects();
  }, { timeoutMs: 5000, intervalMs: 25 });
  return {
    output: () => log,
    async stop() {
      if (nginx.exitCode !== null) return;
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await exited;
    },
  };
}
