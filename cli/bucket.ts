// The command's calls to an S3-compatible bucket (`s3://bucket/prefix/` inputs and outputs), with
// the result store's settings and client setup (server/config-scale.ts's s3Connection,
// server/store/s3-calls.ts's openClient): a lazy listing one page ahead, an object read into memory
// up to a size, HeadObject, and PutObject of a whole body (the object is whole or absent, so a
// killed run leaves nothing half-written).
//
// Which failures are the object's (a CliError: recorded in the failure report, the batch goes on)
// and which are the store's (an S3CallError: the run stops, exit 3, and is run again): an object
// gone since it was listed (404) or refused to us alone (403) is the object's; anything else
// (the store unreachable, throttling past the SDK's retries, a refused write) is the store's.
import type * as S3 from '@aws-sdk/client-s3';
import type { Readable } from 'node:stream';
import { integer, type Env } from '../server/config-env.js';
import { s3Connection } from '../server/config-scale.js';
import { headObject, importOptional, openClient, S3CallError, statusOf, type Sdk } from '../server/store/s3-calls.js';
import { CliError } from './errors.js';
import type { BucketLocation } from './locations.js';

export interface ListedObject {
  key: string;
  size: number;
  /** The ETag without its quotes: what a result's marker names as its source's version. */
  etag: string;
}

/** The variable bucket work reads beside the result store's (docs/configuration.md has its row). */
export const BUCKET_VARIABLES = ['MATTE_S3_LIST_PAGE_SIZE'] as const;

export class BucketClient {
  private constructor(
    private readonly sdk: Sdk,
    private readonly client: S3.S3Client,
    /** Keys a LIST asks for (MATTE_S3_LIST_PAGE_SIZE, default and S3's maximum 1000). */
    private readonly pageSize: number,
  ) {}

  /** The SDK and a client from the environment (the same variables as the S3 result store). */
  static async open(env: Env = process.env): Promise<BucketClient> {
    const connection = s3Connection(env);
    const pageSize = integer(env, 'MATTE_S3_LIST_PAGE_SIZE', 1000, 1, 1000);
    // The SDK's notice about its own future Node requirement would be the first of every run's
    // lines on stderr (on Node 20, which matte supports): a command's stderr says what went wrong.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    const sdk = await importOptional<Sdk>('@aws-sdk/client-s3', 'an s3:// location');
    return new BucketClient(sdk, await openClient(sdk, connection, 'an s3:// location'), pageSize);
  }

  /** Checks that the bucket exists and answers, before anything is listed or written. */
  async checkBucket(location: BucketLocation): Promise<void> {
    try {
      await this.client.send(new this.sdk.HeadBucketCommand({ Bucket: location.bucket }));
    } catch (err) {
      const status = statusOf(err);
      if (status === 404) throw new CliError(`${location.url}: no such bucket`, 'invalid_option', location.url);
      if (status === 403) throw new CliError(`${location.url}: access denied (check the credentials: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the role)`, 'invalid_option', location.url);
      throw new CliError(`${location.url}: the object store does not answer: ${new S3CallError(err).message}`, 'store_unavailable', location.url);
    }
  }

  /**
   * Every object under the prefix, in the store's (key) order, one page at a time: the next page is
   * asked for while the caller works through this one, and no more than two pages are held.
   */
  async *list(location: BucketLocation): AsyncGenerator<ListedObject> {
    const page = (token: string | undefined) =>
      this.call(() => this.client.send(new this.sdk.ListObjectsV2Command({ Bucket: location.bucket, Prefix: location.prefix, ContinuationToken: token, MaxKeys: this.pageSize })));
    let next: Promise<S3.ListObjectsV2CommandOutput> | undefined = page(undefined);
    while (next) {
      const current: S3.ListObjectsV2CommandOutput = await next;
      next = current.IsTruncated && current.NextContinuationToken ? page(current.NextContinuationToken) : undefined;
      // A rejection of the page asked for ahead is seen when it is awaited, not as an unhandled one.
      next?.catch(() => {});
      for (const object of current.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield { key: object.Key, size: object.Size ?? 0, etag: (object.ETag ?? '').replace(/"/g, '') };
      }
    }
  }

  /** The object's bytes; more than maxBytes is the object's failure (input_too_large), found before or while reading. */
  async read(bucket: string, key: string, maxBytes: number, url: string): Promise<Buffer> {
    let out: S3.GetObjectCommandOutput;
    try {
      out = await this.client.send(new this.sdk.GetObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      throw this.objectError(err, url, 'read');
    }
    const body = out.Body as Readable | undefined;
    const length = out.ContentLength;
    if (!body) return Buffer.alloc(0);
    if (length !== undefined && length > maxBytes) {
      body.destroy();
      throw tooLarge(url, length, maxBytes);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      for await (const chunk of body) {
        total += (chunk as Buffer).length;
        if (total > maxBytes) {
          body.destroy();
          throw tooLarge(url, total, maxBytes);
        }
        chunks.push(chunk as Buffer);
      }
    } catch (err) {
      if (err instanceof CliError) throw err;
      throw new S3CallError(err);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  }

  /** The object's user metadata, or undefined when there is no object. */
  async metadata(bucket: string, key: string): Promise<Record<string, string> | undefined> {
    const head = await this.call(() => headObject(this.sdk, this.client, bucket, key));
    return head ? (head.Metadata ?? {}) : undefined;
  }

  /** One PutObject of the whole body. */
  async put(bucket: string, key: string, body: Buffer, contentType: string, metadata: Record<string, string>): Promise<void> {
    await this.call(() => this.client.send(new this.sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentLength: body.length, ContentType: contentType, Metadata: metadata })));
  }

  close(): void {
    this.client.destroy();
  }

  /** A store failure, reduced to what may be printed (the SDK copies the signed request onto its errors). */
  private async call<T>(send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (err) {
      throw new S3CallError(err);
    }
  }

  private objectError(err: unknown, url: string, what: string): Error {
    const status = statusOf(err);
    if (status === 404) return new CliError(`${url}: gone since it was listed`, 'not_found', url);
    if (status === 403) return new CliError(`${url}: access denied to ${what} it`, 'access_denied', url);
    return new S3CallError(err);
  }
}

/** An input over --max-input-bytes: the input's failure, whether a file, a listed object or a body read. */
export function tooLarge(url: string, bytes: number, maxBytes: number): CliError {
  return new CliError(`${url}: ${bytes} bytes, larger than the limit of ${maxBytes} bytes (--max-input-bytes)`, 'input_too_large', url);
}
