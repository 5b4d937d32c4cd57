// docs/deploy.md's nginx proxy_cache in front of the real server, on loopback: the first GET of a
// signed URL goes through to matte (MISS), the second is served by nginx (HIT) without reaching
// matte or the image's origin. Skips, with one line, where nginx is not installed (Debian: nginx).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { signUrl } from '../../lib/index.js';
import { formatOf, gradient } from '../helpers/images.js';
import { get, scrapeMetrics, sleep, startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));
const KEY = 'nginx-test-key-0123456789abcdef0123456789';

async function freePort(): Promise<number> {
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

function signedCount(metrics: string, outcome: string): number {
  return Number(new RegExp(`matte_signed_requests_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
}

if (!NGINX) {
  console.log('skip nginx-cache: nginx is not installed (apt-get install nginx)');
} else {
  let dir: string;
  let matte: TestServer;
  let origin: http.Server;
  let nginx: ChildProcess;
  let nginxLog = '';
  let originHits = 0;
  let base: string;
  let front: string;

  test.before(async () => {
    dir = await tempDir('matte-nginx-');
    const image = gradient(80, 60);
    origin = http.createServer((_req, res) => {
      originHits++;
      res.writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': image.length });
      res.end(image);
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
    matte = await startTestServer({ MATTE_URL_SIGNING_KEYS: KEY, MATTE_ALLOW_PRIVATE_URLS: '1', MATTE_URL_PORTS: '*', MATTE_METRICS_ADDRESS: '127.0.0.1:0' });
    const port = await freePort();
    front = `http://127.0.0.1:${port}`;
    await mkdir(join(dir, 'cache'));
    // One process (no master, no workers), everything under the test's directory.
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
  proxy_cache_path ${dir}/cache levels=1:2 keys_zone=matte:1m max_size=100m inactive=1h use_temp_path=off;
  server {
    listen 127.0.0.1:${port};
    location /images/signed/ {
      proxy_pass http://127.0.0.1:${matte.port};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_cache matte;
      proxy_cache_key $uri;
      proxy_cache_valid 200 1h;
      proxy_cache_lock on;
      proxy_cache_revalidate on;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`;
    await writeFile(join(dir, 'nginx.conf'), conf);
    nginx = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stdout!.on('data', (d) => (nginxLog += d));
    nginx.stderr!.on('data', (d) => (nginxLog += d));
    await waitForPort(port, nginx, () => nginxLog);
  });

  test.after(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await exited;
    }
    await matte?.close();
    origin?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the second GET of a signed URL is served by nginx: HIT, without reaching matte or the origin', async () => {
    const url = signUrl({ input: `${base}/photo.png`, operations: [{ resize: { width: 40 } }] }, { key: KEY, format: 'webp' });
    const first = await get(front, url);
    assert.is(first.status, 200, first.body.toString());
    assert.is(first.headers.get('x-cache-status'), 'MISS');
    assert.is(formatOf(first.body), 'webp');
    const served = signedCount(await scrapeMetrics(matte), '200');
    const hits = originHits;

    const second = await get(front, url);
    assert.is(second.status, 200);
    assert.is(second.headers.get('x-cache-status'), 'HIT');
    assert.ok(second.body.equals(first.body), 'the same bytes');
    assert.is(second.headers.get('cache-control'), first.headers.get('cache-control'));
    assert.is(signedCount(await scrapeMetrics(matte), '200'), served, 'matte was not asked again');
    assert.is(originHits, hits, 'the image was not fetched again');
  });
}

test.run();
