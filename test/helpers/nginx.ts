// Real nginx on loopback for the tests of docs/deploy.md's configurations: one process (no master,
// no workers), everything under a temporary directory. NGINX is undefined where nginx is not
// installed (Debian: nginx; .ci/run installs it): the suites then skip with one line.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { sleep, tempDir } from './server.js';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));

export interface RunningNginx {
  /** http://127.0.0.1:PORT */
  url: string;
  port: number;
  /** The directory of its configuration, temporary paths and logs. */
  dir: string;
  log(): string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function waitForPort(port: number, nginx: ChildProcess, log: () => string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (nginx.exitCode !== null) throw new Error(`nginx exited: ${log()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) return;
    await sleep(25);
  }
  throw new Error(`nginx did not listen on ${port}: ${log()}`);
}

/**
 * Starts nginx with `http` (the inside of its http block, given the port to listen on and the
 * directory) after the temporary paths, and waits until it listens.
 */
export async function startNginx(http: (port: number, dir: string) => string): Promise<RunningNginx> {
  if (!NGINX) throw new Error('nginx is not installed');
  const dir = await tempDir('matte-nginx-');
  const port = await freePort();
  const conf = `daemon off;
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
${http(port, dir)}
}
`;
  await writeFile(join(dir, 'nginx.conf'), conf);
  const nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  nginx.stdout!.on('data', (d) => (output += d));
  nginx.stderr!.on('data', (d) => (output += d));
  await waitForPort(port, nginx, () => output);
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    dir,
    log: () => output,
    async stop() {
      if (nginx.exitCode === null) {
        const exited = new Promise((resolve) => nginx.once('exit', resolve));
        nginx.kill('SIGQUIT');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
