/** The part of a FileHandle that the writer uses (a FileHandle opened for writing fits). */
export interface WritableFile {
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  sync(): Promise<void>;
}

export interface FileWriterOptions {
  /** Chunks are gathered into writes of about this size (default 1 MiB). */
  batchBytes?: number;
  /**
   * Start an fdatasync on the open file after this many bytes were written since the last one
   * started (default 8 MiB; 0 turns it off). Nothing waits for it while data keeps arriving.
   */
  writeBackEveryBytes?: number;
}

export interface FileWriter {
  /**
   * Queues a chunk. Returns a promise when the caller should wait before the next chunk (a batch
   * is full and the previous write is still running), else undefined: awaiting only then keeps
   * one write in flight without a promise per chunk.
   */
  push(chunk: Buffer): Promise<void> | undefined;
  /** Writes every queued chunk and waits for the writes and any write-back under way. */
  flush(): Promise<void>;
  /** flush(), then fsync: when it resolves, every byte pushed is on disk. */
  finish(): Promise<void>;
  /** Bytes pushed so far. */
  readonly pushed: number;
}

/**
 * Early write-backs under way in this process. Each holds a thread of libuv's small pool for as
 * long as the disk takes, so concurrent downloads take turns rather than fill the pool and make
 * every other file operation of the app wait behind their fsyncs.
 */
let writeBacksInFlight = 0;
const MAX_WRITE_BACKS_IN_FLIGHT = 1;

/**
 * Writes a stream of chunks to an open file that must end up durable (fsynced before it is
 * renamed into place), without paying the whole write-back at the end. Chunks are batched into
 * large writes with one write in flight, so receiving overlaps with writing; and every
 * `writeBackEveryBytes` an fdatasync starts on the same file while data keeps arriving, so the
 * kernel writes the dirty pages back during the transfer and the final fsync has little left.
 * A download of 100 MB that fsyncs only at the end waits for all of its write-back after the
 * last byte; with early write-back it waits for the last few MiB.
 *
 * An error of an early fdatasync is kept and thrown by finish(): Linux reports a write-back
 * error to an fd once, so a later fsync of the same file may succeed though data was lost.
 */
export function createFileWriter(file: WritableFile, options: FileWriterOptions = {}): FileWriter {
  const batchLimit = Math.max(1, options.batchBytes ?? 1 << 20);
  const writeBackEvery = options.writeBackEveryBytes ?? 8 << 20;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let pushed = 0;
  let writing: Promise<void> = Promise.resolve();
  let writeBack: Promise<void> | null = null;
  let writeBackError: Error | null = null;
  let sinceWriteBack = 0;

  function startWriteBack(): void {
    sinceWriteBack = 0;
    writeBacksInFlight++;
    writeBack = file
      .datasync()
      .catch((error: unknown) => {
        writeBackError ??= error instanceof Error ? error : new Error(String(error));
      })
      .finally(() => {
        writeBacksInFlight--;
        writeBack = null;
      });
  }

  async function writeAll(buffers: Buffer[], bytes: number): Promise<void> {
    let left = bytes;
    let rest = buffers;
    for (;;) {
      const { bytesWritten } = await file.writev(rest);
      left -= bytesWritten;
      if (left <= 0) break;
      if (bytesWritten <= 0) throw new Error('the file accepted no bytes');
      rest = remainder(rest, bytesWritten);
    }
    sinceWriteBack += bytes;
    if (
      writeBackEvery > 0 &&
      sinceWriteBack >= writeBackEvery &&
      writeBack === null &&
      writeBacksInFlight < MAX_WRITE_BACKS_IN_FLIGHT
    ) {
      startWriteBack();
    }
  }

  /**
   * Hands the batch to a write that starts when the one before it ends (so writes stay in order)
   * and returns that earlier write: waiting for it keeps at most one batch queued behind it.
   */
  function drain(): Promise<void> {
    const before = writing;
    if (batchBytes === 0) return before;
    const buffers = batch;
    const bytes = batchBytes;
    batch = [];
    batchBytes = 0;
    writing = before.then(() => writeAll(buffers, bytes));
    // Marked handled here; whoever awaits `writing` (or the next drain) still sees the error.
    writing.catch(() => undefined);
    return before;
  }

  async function flush(): Promise<void> {
    drain().catch(() => undefined);
    await writing;
    await writeBack;
  }

  return {
    push(chunk) {
      batch.push(chunk);
      batchBytes += chunk.length;
      pushed += chunk.length;
      return batchBytes >= batchLimit ? drain() : undefined;
    },
    flush,
    async finish() {
      await flush();
      await file.sync();
      if (writeBackError !== null) throw writeBackError;
    },
    get pushed() {
      return pushed;
    },
  };
}

/** The buffers left after the first `skip` bytes were written. */
function remainder(buffers: Buffer[], skip: number): Buffer[] {
  const out: Buffer[] = [];
  let left = skip;
  for (const b of buffers) {
    if (left >= b.length) {
      left -= b.length;
      continue;
    }
    out.push(left > 0 ? b.subarray(left) : b);
    left = 0;
  }
  return out;
}
