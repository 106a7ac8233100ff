import { createReadStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { checkBlobKey, checkBlobPrefix } from './blob-keys.ts';
import { ByteLimit } from './limit.ts';
import type { BlobInfo, BlobRange, BlobRead, BlobStore, PutStreamOptions } from './types.ts';
import { BlobNotFoundError, BlobRangeError } from './types.ts';

export const S3_ENDPOINT_ENV = 'CLIPDESK_S3_ENDPOINT';

const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Multipart settings: lib-storage's own defaults (5 MiB parts, 4 in flight), so an upload holds at
 * most ~20 MiB in memory whatever its size; a stream shorter than one part is a single PutObject.
 */
const PART_BYTES = 5 << 20;
const PARTS_IN_FLIGHT = 4;

/**
 * The client for `s3://bucket/prefix`: region and credentials from the AWS SDK's usual chain
 * (AWS_REGION, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, instance roles…), plus
 * `CLIPDESK_S3_ENDPOINT` for S3-compatible stores (MinIO, R2, Ceph). With an endpoint of its own
 * the store is addressed by path (`endpoint/bucket/key`, which MinIO and Ceph need and R2 takes),
 * and the region defaults to us-east-1 when none is set (they ignore it, but the SDK needs one).
 * Checksums are sent only when an operation requires them: S3-compatible stores differ in which
 * of the SDK's newer checksum headers they accept.
 */
export function s3ClientConfig(env: NodeJS.ProcessEnv = process.env): S3ClientConfig {
  const endpoint = env[S3_ENDPOINT_ENV] === '' ? undefined : env[S3_ENDPOINT_ENV];
  return {
    // An endpoint that never answers (a black-holed address) fails in seconds rather than at the
    // system's TCP timeout: a start names the storage at once, a request gets its 503. Nothing
    // bounds a transfer itself: a client reading a file slowly may keep the bucket's stream idle.
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(endpoint === undefined
      ? {}
      : { endpoint, forcePathStyle: true, ...(env['AWS_REGION'] ? {} : { region: 'us-east-1' }) }),
  };
}

export interface S3BlobStoreOptions {
  bucket: string;
  /** Keys are stored under `prefix/` ('' for the bucket's root). */
  prefix: string;
  /** A client of the caller's; by default one from s3ClientConfig(). The store does not destroy a client it was given. */
  client?: S3Client;
}

export function createS3BlobStore(options: S3BlobStoreOptions): BlobStore & { client: S3Client; close(): void } {
  const { bucket } = options;
  const prefix = options.prefix.replace(/^\/+|\/+$/g, '');
  const ownClient = options.client === undefined;
  const client = options.client ?? new S3Client(s3ClientConfig());
  const objectKey = (key: string): string => {
    checkBlobKey(key);
    return prefix === '' ? key : `${prefix}/${key}`;
  };
  const strip = prefix === '' ? 0 : prefix.length + 1;

  const head = async (key: string): Promise<BlobInfo | null> => {
    try {
      const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
      return { key, size: out.ContentLength ?? 0, contentType: out.ContentType ?? null };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  };
  // What the functions below the store read of it (getObject, uploadObject, moveObject).
  const at: ObjectAccess = { client, bucket, objectKey, head };

  return {
    kind: 's3',
    location: `s3://${bucket}${prefix === '' ? '' : `/${prefix}`}`,
    client,

    close() {
      if (ownClient) client.destroy();
    },

    async check() {
      await client.send(new HeadBucketCommand({ Bucket: bucket }));
    },

    async putFile(key, path, options) {
      objectKey(key);
      const { size } = await stat(path);
      const file = createReadStream(path, { highWaterMark: 1 << 20 });
      try {
        await uploadObject(at, key, file, options.contentType);
      } finally {
        file.destroy();
      }
      if (options.removeSource) await rm(path, { force: true });
      return { key, size, contentType: options.contentType };
    },

    async putStream(key, source: Readable, options: PutStreamOptions) {
      objectKey(key);
      const limit = new ByteLimit(options.maxBytes);
      // The source's errors (and the limit's) reach the Upload through `limit`, which it reads.
      pipeline(source, limit, () => undefined);
      try {
        await uploadObject(at, key, limit, options.contentType, options.signal);
      } catch (error) {
        throw limit.refused ?? error;
      } finally {
        if (!limit.readableEnded) limit.destroy();
      }
      return { key, size: limit.bytes, contentType: options.contentType };
    },

    move: (from, to, options) => moveObject(at, from, to, options.contentType),

    get: (key, options: { range?: BlobRange } = {}) => getObject(at, key, options.range),

    head,

    async delete(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) }));
    },

    async *list(listPrefix) {
      checkBlobPrefix(listPrefix);
      let token: string | undefined;
      do {
        const out = await client.send(
          new ListObjectsV2Command({
            Bucket: bucket,
            Prefix: prefix === '' ? listPrefix : `${prefix}/${listPrefix}`,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
        for (const o of out.Contents ?? []) {
          if (o.Key === undefined) continue;
          yield {
            key: o.Key.slice(strip),
            size: o.Size ?? 0,
            contentType: null,
            ...(o.LastModified ? { modifiedMs: o.LastModified.getTime() } : {}),
          };
        }
        token = out.IsTruncated ? out.NextContinuationToken : undefined;
      } while (token);
    },

    async presignGet(key, options) {
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: objectKey(key),
        ...(options.contentType ? { ResponseContentType: options.contentType } : {}),
        ...(options.disposition ? { ResponseContentDisposition: options.disposition } : {}),
      });
      return getSignedUrl(client, command, { expiresIn: options.expiresInSeconds });
    },
  };
}

/** HTTP's form of a range, or undefined for one that can never be satisfied. */
function rangeHeader(range: BlobRange): string | undefined {
  if ('suffix' in range)
    return Number.isSafeInteger(range.suffix) && range.suffix > 0 ? `bytes=-${range.suffix}` : undefined;
  if (!Number.isSafeInteger(range.start) || range.start < 0) return undefined;
  if (range.end === undefined) return `bytes=${range.start}-`;
  return Number.isSafeInteger(range.end) && range.end >= range.start ? `bytes=${range.start}-${range.end}` : undefined;
}

function statusOf(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
}

function isNotFound(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  return name === 'NoSuchKey' || name === 'NotFound' || statusOf(error) === 404;
}

/** What reading, storing and moving an object need of its store. */
interface ObjectAccess {
  client: S3Client;
  bucket: string;
  objectKey(key: string): string;
  head(key: string): Promise<BlobInfo | null>;
}

/** An object, or a range of it, with its size and where the range starts and ends. */
async function getObject(at: ObjectAccess, key: string, range: BlobRange | undefined): Promise<BlobRead> {
  const Key = at.objectKey(key);
  const header = range === undefined ? undefined : rangeHeader(range);
  if (range !== undefined && header === undefined) {
    // A range no store could satisfy (`bytes=-0`): the answer still needs the size.
    const found = await at.head(key);
    if (!found) throw new BlobNotFoundError(key);
    throw new BlobRangeError(found.size);
  }
  let out;
  try {
    out = await at.client.send(new GetObjectCommand({ Bucket: at.bucket, Key, ...(header ? { Range: header } : {}) }));
  } catch (error) {
    if (isNotFound(error)) throw new BlobNotFoundError(key);
    if (statusOf(error) === 416) {
      const found = await at.head(key);
      if (!found) throw new BlobNotFoundError(key);
      // S3 answers a range on an empty object with 416 too; so does disk (resolveRange).
      throw new BlobRangeError(found.size);
    }
    throw error;
  }
  const stream = out.Body instanceof Readable ? out.Body : Readable.from([]);
  const length = out.ContentLength ?? 0;
  const content = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(out.ContentRange ?? '');
  const [start, end, size] = content
    ? [Number(content[1]), Number(content[2]), Number(content[3])]
    : [0, length - 1, length];
  if (range !== undefined && !content) {
    // A store that ignores Range would hand over the whole object as if it were the range.
    stream.destroy();
    throw new Error(`the store ignored the Range header for ${key}`);
  }
  return { stream, size, start, end, partial: range !== undefined, contentType: out.ContentType ?? null };
}

/** Stores `body` under `key` in parts (PART_BYTES, PARTS_IN_FLIGHT); `signal` gives up on it. */
async function uploadObject(
  at: ObjectAccess,
  key: string,
  body: Readable,
  contentType: string,
  signal?: AbortSignal,
): Promise<void> {
  const run = new Upload({
    client: at.client,
    params: { Bucket: at.bucket, Key: at.objectKey(key), Body: body, ContentType: contentType },
    partSize: PART_BYTES,
    queueSize: PARTS_IN_FLIGHT,
    // Any failure aborts the multipart upload at the store: no orphaned parts.
    leavePartsOnError: false,
  });
  // Giving up fails the body, not the Upload: lib-storage's own abort() returns before it has
  // aborted the multipart upload, while a failing body runs its whole cleanup first.
  const onAbort = (): void => {
    body.destroy(signal?.reason instanceof Error ? signal.reason : new Error('upload aborted'));
  };
  if (signal?.aborted) onAbort();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await run.done();
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Copies `from` to `to` with a new content type, then removes `from`: S3 has no rename. Resolves
 * once the copy is there; a source left behind is an orphan retention or fsck removes.
 */
async function moveObject(at: ObjectAccess, from: string, to: string, contentType: string): Promise<BlobInfo> {
  const source = at.objectKey(from);
  const target = at.objectKey(to);
  try {
    await at.client.send(
      new CopyObjectCommand({
        Bucket: at.bucket,
        Key: target,
        // Key characters are limited to URL-safe ones (keys.ts): no encoding needed.
        CopySource: `${at.bucket}/${source}`,
        MetadataDirective: 'REPLACE',
        ContentType: contentType,
      }),
    );
  } catch (error) {
    if (isNotFound(error)) throw new BlobNotFoundError(from);
    throw error;
  }
  const copied = await at.head(to);
  if (!copied) throw new Error(`the store lost ${to} right after copying it`);
  // The copy is what matters; a source left behind is an orphan retention or fsck removes.
  await at.client.send(new DeleteObjectCommand({ Bucket: at.bucket, Key: source })).catch(() => undefined);
  return copied;
}
