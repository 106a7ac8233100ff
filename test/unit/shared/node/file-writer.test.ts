import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileWriter } from '../../../../shared/node/file-writer.ts';
import type { WritableFile } from '../../../../shared/node/file-writer.ts';

/** A file in memory whose writes and syncs finish only when the test says so. */
function fakeFile(options: { shortWrites?: boolean; datasyncError?: Error } = {}) {
  const events: string[] = [];
  const data: Buffer[] = [];
  const pending: Array<() => void> = [];
  let writesInFlight = 0;
  let maxWritesInFlight = 0;
  const later = <T>(fn: () => T): Promise<T> =>
    new Promise<T>((resolve, reject) =>
      pending.push(() => {
        try {
          resolve(fn());
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      }),
    );
  const file: WritableFile = {
    writev(buffers) {
      writesInFlight++;
      maxWritesInFlight = Math.max(maxWritesInFlight, writesInFlight);
      const all = Buffer.concat(buffers);
      // A short write takes only half of what it was given (at least one byte).
      const take = options.shortWrites && all.length > 1 ? Math.ceil(all.length / 2) : all.length;
      events.push(`write ${take}`);
      return later(() => {
        writesInFlight--;
        data.push(all.subarray(0, take));
        return { bytesWritten: take };
      });
    },
    datasync() {
      events.push(`datasync at ${Buffer.concat(data).length}`);
      return later(() => {
        if (options.datasyncError) throw options.datasyncError;
      });
    },
    sync() {
      events.push(`sync at ${Buffer.concat(data).length}`);
      return later(() => undefined);
    },
  };
  /** Lets every operation started so far finish, and those they start, until none is left. */
  async function settle(): Promise<void> {
    for (let rounds = 0; rounds < 1000; rounds++) {
      await new Promise((r) => setImmediate(r));
      const step = pending.shift();
      if (!step) return;
      step();
    }
  }
  return { file, events, settle, contents: () => Buffer.concat(data), maxWritesInFlight: () => maxWritesInFlight };
}

/** Pushes chunks the way a download loop does: waiting only when push asks to. */
async function pushAll(writer: ReturnType<typeof createFileWriter>, chunks: Buffer[], settle: () => Promise<void>) {
  for (const chunk of chunks) {
    const wait = writer.push(chunk);
    if (wait) {
      void settle();
      await wait;
    }
  }
}

describe('createFileWriter', () => {
  it('writes every chunk in order in batches, one write in flight, and fsyncs after the last write', async () => {
    const fake = fakeFile();
    const writer = createFileWriter(fake.file, { batchBytes: 100, writeBackEveryBytes: 0 });
    const chunks = Array.from({ length: 25 }, () => randomBytes(30));
    await pushAll(writer, chunks, fake.settle);
    const done = writer.finish();
    await fake.settle();
    await done;
    expect(fake.contents().equals(Buffer.concat(chunks))).toBe(true);
    expect(fake.maxWritesInFlight()).toBe(1);
    expect(fake.events.filter((e) => e.startsWith('write')).length).toBeLessThan(10);
    expect(fake.events.at(-1)).toBe(`sync at ${25 * 30}`);
    expect(fake.events.some((e) => e.startsWith('datasync'))).toBe(false);
    expect(writer.pushed).toBe(25 * 30);
  });

  it('starts write-back while data still arrives, so the final fsync comes after it', async () => {
    const fake = fakeFile();
    const writer = createFileWriter(fake.file, { batchBytes: 100, writeBackEveryBytes: 300 });
    const chunks = Array.from({ length: 40 }, () => randomBytes(50));
    await pushAll(writer, chunks, fake.settle);
    const done = writer.finish();
    await fake.settle();
    await done;
    const datasyncs = fake.events.filter((e) => e.startsWith('datasync'));
    expect(datasyncs.length).toBeGreaterThan(1);
    // The first write-back started long before the last byte was written.
    expect(Number(datasyncs[0]!.split(' ').at(-1))).toBeLessThan(1000);
    expect(fake.events.at(-1)).toBe('sync at 2000');
    expect(fake.contents().equals(Buffer.concat(chunks))).toBe(true);
  });

  it('runs one early write-back at a time in the process, whichever file it is for', async () => {
    let inFlight = 0;
    let peak = 0;
    let started = 0;
    const fakes = [fakeFile(), fakeFile()];
    for (const fake of fakes) {
      const datasync = fake.file.datasync.bind(fake.file);
      fake.file.datasync = () => {
        inFlight++;
        started++;
        peak = Math.max(peak, inFlight);
        return datasync().finally(() => inFlight--);
      };
    }
    const writers = fakes.map((fake) => createFileWriter(fake.file, { batchBytes: 100, writeBackEveryBytes: 200 }));
    const settleAll = () => Promise.all(fakes.map((fake) => fake.settle()));
    const chunks = Array.from({ length: 40 }, () => randomBytes(50));
    for (const chunk of chunks) {
      const waits = writers.map((writer) => writer.push(chunk)).filter((wait) => wait !== undefined);
      if (waits.length > 0) {
        void settleAll();
        await Promise.all(waits);
      }
    }
    const done = Promise.all(writers.map((writer) => writer.finish()));
    await settleAll();
    await done;
    expect(started).toBeGreaterThan(1);
    expect(peak).toBe(1);
    for (const fake of fakes) expect(fake.contents().equals(Buffer.concat(chunks))).toBe(true);
  });

  it('finishes short writes', async () => {
    const fake = fakeFile({ shortWrites: true });
    const writer = createFileWriter(fake.file, { batchBytes: 64 });
    const chunks = Array.from({ length: 10 }, () => randomBytes(40));
    await pushAll(writer, chunks, fake.settle);
    const done = writer.finish();
    await fake.settle();
    await done;
    expect(fake.contents().equals(Buffer.concat(chunks))).toBe(true);
  });

  it('reports a failed early write-back even when the final fsync succeeds', async () => {
    const fake = fakeFile({ datasyncError: new Error('EIO') });
    const writer = createFileWriter(fake.file, { batchBytes: 10, writeBackEveryBytes: 10 });
    await pushAll(writer, [randomBytes(20), randomBytes(20), randomBytes(20)], fake.settle);
    const done = writer.finish();
    void fake.settle();
    await expect(done).rejects.toThrow('EIO');
    expect(fake.events.at(-1)).toMatch(/^sync/);
  });

  it('passes a write error to the next push that waits, and to flush', async () => {
    const file: WritableFile = {
      writev: () => Promise.reject(new Error('ENOSPC')),
      datasync: () => Promise.resolve(),
      sync: () => Promise.resolve(),
    };
    const writer = createFileWriter(file, { batchBytes: 10 });
    expect(writer.push(randomBytes(10))).toBeDefined();
    await expect(writer.push(randomBytes(10))).rejects.toThrow('ENOSPC');
    await expect(writer.flush()).rejects.toThrow('ENOSPC');
  });

  it('writes a real file that reads back the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-writer-'));
    try {
      const path = join(dir, 'out.bin');
      const handle = await open(path, 'w');
      const chunks = Array.from({ length: 300 }, () => randomBytes(10_000));
      try {
        const writer = createFileWriter(handle, { batchBytes: 64 << 10, writeBackEveryBytes: 256 << 10 });
        for (const chunk of chunks) await writer.push(chunk);
        await writer.finish();
      } finally {
        await handle.close();
      }
      expect((await readFile(path)).equals(Buffer.concat(chunks))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
