// An s3rver in a process of its own: `node test/support/s3-server.ts DIR BUCKET`. Prints
// `listening PORT` once it serves on 127.0.0.1, and exits (removing DIR) when its stdin closes,
// which is how it dies with its parent even when the parent is SIGKILLed. Used by test/support/s3.ts.
//
// s3rver 3.7.1 differs from S3 in three ways the service relies on; they are patched here so the
// tests hold our store to S3's behaviour, not to s3rver's:
// - AbortMultipartUpload (DELETE ?uploadId) is not implemented: here it removes the upload's parts.
// - Suffix ranges (`bytes=-N`) are read as `bytes=0-N`: here they are turned into `bytes=S-E`.
// - A range ending at byte 0 (`bytes=0-0`) sends the whole object: here it sends byte 0; and a
//   range of an empty object is answered 206 with a byte: here 416, as S3 does.
import { createReadStream, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

interface S3rverObject {
  content: Readable | null;
  range?: { start: number; end: number };
}
interface S3rverStore {
  getMetadata(bucket: string, key: string): Promise<Record<string, string>>;
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<S3rverObject | null>;
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
}
interface KoaContext {
  method: string;
  path: string;
  query: Record<string, string | undefined>;
  headers: Record<string, string | undefined>;
  status: number;
  body: unknown;
}
interface S3rverApp {
  store: S3rverStore;
  middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>;
  run(): Promise<{ port: number }>;
}
type S3rverCtor = new (options: Record<string, unknown>) => S3rverApp;

const [dir, bucket] = process.argv.slice(2);
if (!dir || !bucket) {
  console.error('usage: s3-server.ts DIR BUCKET');
  process.exit(2);
}

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory: dir,
  configureBuckets: [{ name: bucket }],
});

const original = server.store.getObject.bind(server.store);
server.store.getObject = async (b, key, options) => {
  if (options?.end !== 0 || (options.start ?? 0) !== 0) return original(b, key, options);
  const object = await original(b, key, { start: 0 });
  if (object?.content) {
    object.content.destroy();
    object.content = createReadStream(server.store.getResourcePath(b, key, 'object'), { start: 0, end: 0 });
    object.range = { start: 0, end: 0 };
  }
  return object;
};

// Ahead of s3rver's own router (Koa composes `middleware` when the server starts).
server.middleware.unshift(async (ctx, next) => {
  const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
  if (match && ctx.method === 'DELETE' && ctx.query['uploadId']) {
    const uploadId = ctx.query['uploadId'];
    if (!/^[A-Za-z0-9_-]+$/.test(uploadId)) {
      ctx.status = 400;
      return;
    }
    await rm(join(server.store.getResourcePath(match[1] ?? '', undefined, 'uploads'), uploadId), {
      recursive: true,
      force: true,
    });
    ctx.status = 204;
    ctx.body = null;
    return;
  }
  const range = ctx.headers['range'];
  if (match && ctx.method === 'GET' && range !== undefined) {
    const metadata = await server.store
      .getMetadata(match[1] ?? '', decodeURIComponent(match[2] ?? ''))
      .catch(() => null);
    const size = Number(metadata?.['content-length']);
    const suffix = /^bytes=-(\d+)$/.exec(range);
    if (metadata && Number.isSafeInteger(size)) {
      // Unsatisfiable ranges become a start past the end, which s3rver answers with 416 as S3 does.
      if (size === 0) ctx.headers['range'] = 'bytes=1-';
      else if (suffix) {
        const n = Number(suffix[1]);
        ctx.headers['range'] = n === 0 ? `bytes=${size}-` : `bytes=${Math.max(0, size - n)}-${size - 1}`;
      }
    }
  }
  await next();
});

const { port } = await server.run();
process.stdout.write(`listening ${port}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
});
