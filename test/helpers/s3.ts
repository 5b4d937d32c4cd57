// A real S3-protocol server for the tests: s3rver on 127.0.0.1 (port chosen by the OS), storing
// its objects in a temporary directory, with one bucket. Its only credentials are S3RVER/S3RVER.
//
// s3rver 3.7.1 encrypts ListObjectsV2's continuation tokens with single DES (`des`), which Node 20's
// OpenSSL 3 no longer offers: every listing of more than one page was answered 500. Triple DES
// with the 8-byte key repeated three times (EDE with K1 = K2 = K3) is single DES, so mapping `des`
// to `des-ede3-cbc` in this process gives s3rver the very tokens it meant to make; nothing else
// asks for `des` (it throws without this), and nothing in node_modules is changed.
import crypto from 'node:crypto';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import S3rver from 's3rver';
import { S3Client } from '@aws-sdk/client-s3';
import { tempDir } from './server.js';

let desMapped = false;
function mapSingleDes(): void {
  if (desMapped) return;
  desMapped = true;
  const { createCipheriv, createDecipheriv } = crypto;
  const tripled = (key: crypto.CipherKey) => Buffer.concat([Buffer.from(key as Buffer), Buffer.from(key as Buffer), Buffer.from(key as Buffer)]);
  const cipheriv = (algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null, options?: object) =>
    algorithm === 'des' ? createCipheriv('des-ede3-cbc', tripled(key), iv) : createCipheriv(algorithm, key, iv, options as never);
  const decipheriv = (algorithm: string, key: crypto.CipherKey, iv: crypto.BinaryLike | null, options?: object) =>
    algorithm === 'des' ? createDecipheriv('des-ede3-cbc', tripled(key), iv) : createDecipheriv(algorithm, key, iv, options as never);
  Object.assign(crypto, { createCipheriv: cipheriv, createDecipheriv: decipheriv });
}

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** The key of every object written (PutObject) since the start, in order. */
  puts: string[];
  /** The environment a matte process needs to use this bucket (prefix given). */
  env(prefix: string): Record<string, string>;
  /** An SDK client, to look into the bucket directly. */
  client: S3Client;
  close(): Promise<void>;
}

export async function startTestS3(bucket = 'matte-results'): Promise<TestS3> {
  mapSingleDes();
  const dir = await tempDir('matte-s3rver-');
  const server = new S3rver({ address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: [{ name: bucket }] });
  const puts: string[] = [];
  server.on('event', (event: { Records: Array<{ eventName: string; s3: { object: { key: string } } }> }) => {
    for (const record of event.Records) if (record.eventName === 'ObjectCreated:Put') puts.push(record.s3.object.key);
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  return {
    endpoint,
    bucket,
    puts,
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
