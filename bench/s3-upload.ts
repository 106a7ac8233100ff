import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { CONTENT_LIMITS } from '../shared/api/index.ts';
import { createS3BlobStore } from '../server/storage/blobs/s3.ts';
import { startS3 } from '../test/support/s3.ts';
import { percentile, reportFigure } from './support/report.ts';

/**
 * docs/benchmarks.md: a 100 MB upload to S3 storage ≥ 0.8× a plain @aws-sdk/lib-storage upload of the same
 * file. Ours is the service's path for an upload body: BlobStore.putStream with the 100 MB limit
 * counted while streaming (exactly at the limit), multipart through lib-storage. The comparator is
 * a bare `new Upload({client, params: {Bucket, Key, Body}}).done()` of the same file with the same
 * client and lib-storage's defaults. Both read the file from disk (the page cache after the first
 * round) and write to the same S3-compatible server (s3rver, in a process of its own, as a bucket
 * is a service of its own). Rounds alternate which side goes first; each side keeps its best, and
 * the median of each round's paired ratio is printed as the steadier figure.
 */
const SIZE = CONTENT_LIMITS.uploadVideoBytes;
const ROUNDS = 5;

export default async function (): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-s3-'));
  const s3 = await startS3({ bucket: 'clipdesk-bench' });
  const client = s3.client();
  const store = createS3BlobStore({ bucket: s3.bucket, prefix: 'bench', client });
  try {
    const file = join(dir, 'upload.bin');
    const handle = await open(file, 'w');
    for (let written = 0; written < SIZE; written += 4 << 20)
      await handle.write(randomBytes(Math.min(4 << 20, SIZE - written)));
    await handle.close();

    // RSS of this process (the client side, where an upload's parts are held) sampled every 10 ms
    // during each side: the peak over what it had before the first upload, per side.
    const rssBefore = process.memoryUsage.rss();
    const rssPeak = { ours: rssBefore, plain: rssBefore };
    const time = async (side: 'ours' | 'plain', run: () => Promise<unknown>): Promise<number> => {
      const sampler = setInterval(() => {
        rssPeak[side] = Math.max(rssPeak[side], process.memoryUsage.rss());
      }, 10);
      const started = process.hrtime.bigint();
      try {
        await run();
      } finally {
        clearInterval(sampler);
      }
      return SIZE / 1e6 / (Number(process.hrtime.bigint() - started) / 1e9);
    };
    const ours = () =>
      store.putStream('uploads/upl_bench/data', createReadStream(file, { highWaterMark: 1 << 20 }), {
        contentType: 'video/mp4',
        maxBytes: SIZE,
      });
    const plain = () =>
      new Upload({
        client,
        params: {
          Bucket: s3.bucket,
          Key: 'plain/upload.bin',
          Body: createReadStream(file, { highWaterMark: 1 << 20 }),
        },
      }).done();

    let bestOurs = 0;
    let bestPlain = 0;
    const oursRounds: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const inRound = { ours: 0, plain: 0 };
      for (const side of round % 2 === 0 ? (['ours', 'plain'] as const) : (['plain', 'ours'] as const)) {
        inRound[side] = await time(side, side === 'ours' ? ours : plain);
        // Outside the timing: each side starts from an empty bucket.
        if (side === 'ours') await store.delete('uploads/upl_bench/data');
        else await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'plain/upload.bin' }));
      }
      bestOurs = Math.max(bestOurs, inRound.ours);
      bestPlain = Math.max(bestPlain, inRound.plain);
      oursRounds.push(inRound.ours);
      ratios.push(inRound.ours / inRound.plain);
    }
    reportFigure('s3-upload-100mb', bestOurs, 'MB/s', bestOurs / bestPlain, 'a plain @aws-sdk/lib-storage upload');
    reportFigure(
      's3-upload-100mb-median-round',
      percentile(oursRounds, 50),
      'MB/s',
      percentile(ratios, 50),
      "a plain @aws-sdk/lib-storage upload, median of each round's ratio",
    );
    // Both sides run in this process and freed memory stays with it, so the peak is the process's
    // (the first side to run pays for the heap both then reuse): what it shows is that an upload
    // holds its parts in flight, not the file.
    const growth = (Math.max(rssPeak.ours, rssPeak.plain) - rssBefore) / 1e6;
    reportFigure(
      's3-upload-rss-growth',
      growth,
      'MB',
      growth / (SIZE / 1e6),
      "the file's size (buffering it whole would be ≥ 1)",
    );
  } finally {
    client.destroy();
    await s3.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
