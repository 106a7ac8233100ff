import { Transform } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { BlobTooLargeError } from './types.ts';

/**
 * Passes bytes through while counting them; the chunk that would pass `maxBytes` is not passed on,
 * and the stream fails with BlobTooLargeError instead. Both stores put through this, so the limit
 * holds while streaming, before anything is complete: exactly `maxBytes` succeeds.
 */
export class ByteLimit extends Transform {
  readonly maxBytes: number;
  bytes = 0;
  /** Set when the limit stopped the stream: the error a store reports, whatever its client made of it. */
  refused: BlobTooLargeError | null = null;

  constructor(maxBytes: number) {
    super();
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) throw new RangeError(`maxBytes must be a whole number ≥ 0`);
    this.maxBytes = maxBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      this.refused = new BlobTooLargeError(this.maxBytes);
      done(this.refused);
      return;
    }
    done(null, chunk);
  }
}
