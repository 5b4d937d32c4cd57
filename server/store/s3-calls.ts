// What the S3 store, its keyed area (s3.ts, s3-entries.ts) and the command's bucket work
// (cli/bucket.ts) share about talking to a bucket: the SDK imported on first use and the one client
// setup (deadlines, retries, checksums), matte's marker on every object the store writes (and the
// only objects it deletes or replaces), the HTTP status of an SDK error, an object's metadata, and
// what of such an error may be logged.
import type * as S3 from '@aws-sdk/client-s3';
import type { S3Connection } from '../config-scale.js';
import { StoreSetupError } from './errors.js';

export type Sdk = typeof S3;

export const SDK_INSTALL_COMMAND = 'npm install @aws-sdk/client-s3 @aws-sdk/s3-request-presigner';

/** The deadline of one S3 call when none is configured. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** Imports an optional peer dependency; its absence is a StoreSetupError naming `what` and the npm command. */
export async function importOptional<T>(name: string, what: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new StoreSetupError(`${what} needs the AWS SDK, which is not installed: run \`${SDK_INSTALL_COMMAND}\``);
    }
    throw err;
  }
}

/**
 * The one client setup of every S3 user in matte; its region is resolved here, so a missing one is a
 * StoreSetupError naming `what` rather than a failure of the first call.
 */
export async function openClient(sdk: Sdk, connection: Omit<S3Connection, 'timeoutMs'> & { timeoutMs?: number }, what: string): Promise<S3.S3Client> {
  const { endpoint, forcePathStyle, credentials } = connection;
  const timeoutMs = connection.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new sdk.S3Client({
    region: connection.region ?? (endpoint ? 'us-east-1' : undefined),
    endpoint,
    forcePathStyle,
    credentials,
    maxAttempts: 2,
    // The SDK's default checksums (CRC32 on every put) are refused by several S3-compatible
    // stores; S3 itself needs them only where an API requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Real deadlines: without throwOnRequestTimeout the locked handler only logs a warning when
    // requestTimeout passes, and a socket that stalls mid-body needs its own idle timeout.
    requestHandler: { connectionTimeout: Math.min(3000, timeoutMs), requestTimeout: timeoutMs, throwOnRequestTimeout: true, socketTimeout: timeoutMs },
  });
  try {
    await client.config.region();
  } catch {
    client.destroy();
    throw new StoreSetupError(`${what} needs a region: set AWS_REGION (or MATTE_S3_ENDPOINT for an S3-compatible store)`);
  }
  return client;
}

/** The metadata every object the store writes carries, and the only objects it deletes. */
export const MARKER_META = 'matte-store';
export const MARKER = '1';

/** The HTTP status of an SDK error (404 for NotFound / NoSuchKey / NoSuchBucket), if it has one. */
export function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
}

/** The object's metadata, or undefined when there is none (404); any other failure is thrown as it came. */
export async function headObject(
  sdk: Sdk,
  client: S3.S3Client,
  bucket: string,
  key: string,
  options?: { abortSignal: AbortSignal },
): Promise<S3.HeadObjectCommandOutput | undefined> {
  try {
    return await client.send(new sdk.HeadObjectCommand({ Bucket: bucket, Key: key }), options);
  } catch (err) {
    if (statusOf(err) === 404) return undefined;
    throw err;
  }
}

/**
 * What the log may say about an SDK error: its name, code and HTTP status. Never its message or its
 * other properties: smithy copies the request (StringToSign, CanonicalRequest, the URL) onto them.
 */
export function describe(err: unknown): { name?: string; code?: string; status?: number } {
  const e = err as { name?: string; code?: string; Code?: string };
  return { name: e?.name, code: e?.code ?? e?.Code, status: statusOf(err) };
}

/** An SDK error reduced to what may be logged (describe); the cause of store errors and sweep failures. */
export class S3CallError extends Error {
  readonly code?: string;
  readonly status?: number;
  constructor(err: unknown) {
    const { name, code, status } = describe(err);
    super(`S3 call failed: ${name ?? 'error'}${code ? ` ${code}` : ''}${status ? ` (HTTP ${status})` : ''}`);
    this.name = 'S3CallError';
    if (code !== undefined) this.code = code;
    if (status !== undefined) this.status = status;
  }
}
