// run-tests: parallel
// docs/deploy.md's nginx proxy_cache in front of the real server, on loopback: the first GET of a
// signed URL goes through to matte (MISS), the second is served by nginx (HIT) without reaching
// matte or the image's origin. Skips, with one line, where nginx is not installed (Debian: nginx).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { signUrl } from '../../lib/index.js';
import { formatOf, gradient } from '../helpers/images.js';
import { NGINX, startNginx, type RunningNginx } from '../helpers/nginx.js';
import { freePort } from '../helpers/ports.js';
import { get, scrapeMetrics, startTestServer, tempDir, type TestServer } from '../helpers/server.js';

const KEY = 'nginx-test-key-0123456789abcdef0123456789';

function signedCount(metrics: string, outcome: string): number {
  return Number(new RegExp(`matte_signed_requests_total\\{outcome="${outcome}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);
}

if (!NGINX) {
  console.log('skip nginx-cache: nginx is not installed (apt-get install nginx)');
} else {
  let dir: string;
  let matte: TestServer;
  let origin: http.Server;
  let nginx: RunningNginx | undefined;
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
    nginx = await startNginx(dir, `
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
  }`, port);
  });

  test.after(async () => {
    await nginx?.stop();
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
