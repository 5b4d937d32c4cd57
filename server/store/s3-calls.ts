// What the S3 store and its keyed area (s3.ts, s3-entries.ts) share about talking to the bucket:
// matte's marker on every object they write (and the only objects they delete or replace), the
// HTTP status of an SDK error, an object's metadata, and what of such an error may be logged.
import type * as S3 from '@aws-sdk/client-s3';

export type Sdk = typeof S3;

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
