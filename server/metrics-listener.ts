// The metrics listener (MATTE_METRICS_ADDRESS, default 127.0.0.1:9464): GET /metrics without a key,
// on an address of its own, the way Prometheus exporters bind apart from the service they watch.
// The public port serves /metrics only with MATTE_METRICS_KEY (server/metrics.ts).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from './metrics.js';

export interface MetricsAddress {
  host: string;
  port: number;
}

export interface MetricsListener {
  server: http.Server;
  /** http://host:port actually bound. */
  url: string;
  close(): Promise<void>;
}

function reply(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  res.end(body);
}

export async function listenForMetrics(metrics: Metrics, address: MetricsAddress): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics') return reply(res, 404, 'application/json; charset=utf-8', JSON.stringify({ error: { code: 'not_found', message: 'this listener serves GET /metrics only' } }));
    if (req.method !== 'GET' && req.method !== 'HEAD') return reply(res, 405, 'application/json; charset=utf-8', JSON.stringify({ error: { code: 'method_not_allowed', message: 'use GET' } }));
    metrics.registry.metrics().then(
      (text) => reply(res, 200, metrics.registry.contentType, text),
      () => reply(res, 500, 'application/json; charset=utf-8', JSON.stringify({ error: { code: 'internal', message: 'metrics could not be collected' } })),
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(address.port, address.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
  return {
    server,
    url: `http://${host}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
