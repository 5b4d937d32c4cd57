// A real S3-protocol server for the tests: s3rver on 127.0.0.1 (port chosen by the OS), storing
// its objects in a temporary directory, with one bucket. Its only credentials are S3RVER/S3RVER.
import { rm } from 'node:fs/promises';
import net from 'node:net';
import S3rver from 's3rver';
import { S3Client } from '@aws-sdk/client-s3';
import { tempDir } from './server.js';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The environment a matte process needs to use this bucket (prefix given). */
  env(prefix: string): Record<string, string>;
  /** An SDK client, to look into the bucket directly. */
  client: S3Client;
  close(): Promise<void>;
}

export async function startTestS3(bucket = 'matte-results'): Promise<TestS3> {
  const dir = await tempDir('matte-s3rver-');
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return {
    endpoint,
    bucket,
    client,
    env: (prefix) => ({
      MATTE_RESULTS_STORE: 's3',
      MATTE_S3_BUCKET: bucket,
      MATTE_S3_PREFIX: prefix,
      MATTE_S3_ENDPOINT: endpoint,
      MATTE_S3_FORCE_PATH_STYLE: '1',
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    }),
    async close() {
      client.destroy();
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface StalledEndpoint {
  endpoint: string;
  /** The connections it accepted so far. */
  accepted: net.Socket[];
  /** The request line of every request it was sent (one a connection: it never answers). */
  requests: string[];
  close(): void;
}

/** An S3 endpoint on 127.0.0.1 that accepts every connection, reads what comes, and never answers. */
export async function startStalledEndpoint(): Promise<StalledEndpoint> {
  const accepted: net.Socket[] = [];
  const requests: string[] = [];
  const server = net.createServer((socket) => {
    accepted.push(socket);
    let head = '';
    socket.on('data', (chunk) => {
      if (head.includes('\r\n')) return;
      head += chunk.toString('latin1');
      if (head.includes('\r\n')) requests.push(head.slice(0, head.indexOf('\r\n')));
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    accepted,
    requests,
    close() {
      for (const socket of accepted) socket.destroy();
      server.close();
    },
  };
}
