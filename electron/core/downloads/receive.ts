import { createHash } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import { ServiceError } from '../api/errors.ts';
import type { RawResponse } from '../api/client-types.ts';
import type { DownloadableItem, DownloadContext, DownloadRequest, DownloadResult } from './types.ts';
import { createPartWriter, hashFile, header, syncDir, validatorOf, type PartMeta } from './part-file.ts';
import { failureFrom } from './sources.ts';

/** One attempt's answer to a download request, from `res` to the file in place with its sidecar. */
export interface Receiving {
  res: RawResponse;
  source: 'content' | 'url';
  /** Bytes already in the part file (a resume asked for the rest). */
  offset: number;
  req: DownloadRequest;
  /** The item as last seen (its URLs renewed when they had expired). */
  current: { item: DownloadableItem };
  target: string;
  sidecarPath: string;
  part: string;
  metaPath: string;
  emit: (received: number, total: number | null) => void;
  counts: { resumes: number };
  /** How long the body may send nothing before this attempt gives up on the connection. */
  idleTimeoutMs: number;
}

/**
 * Ends `body` with an error once it has sent nothing for `ms`: the for-await reading it throws, and
 * the download resumes on a new connection. `touch` on every chunk; `stop` when the body is done.
 */
function watchForStall(body: RawResponse['body'], ms: number, what: string): { touch(): void; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (): void => {
    timer = setTimeout(
      () => body.destroy(new Error(`${what} sent nothing for ${Math.round(ms / 1000)} s; resuming`)),
      ms,
    );
    timer.unref?.();
  };
  arm();
  return {
    touch() {
      clearTimeout(timer);
      arm();
    },
    stop() {
      clearTimeout(timer);
    },
  };
}

export async function receive(r: Receiving): Promise<DownloadResult> {
  const { res, source, offset, req, current, target, sidecarPath, part, metaPath, emit } = r;
  const { item } = req;
  let handle: FileHandle | null = null;
  try {
    let start: number;
    let total: number | null;
    if (res.status === 206 && offset > 0) {
      const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(res, 'content-range') ?? '');
      if (!m || Number(m[1]) !== offset) {
        await res.body.dump();
        await rm(part, { force: true });
        throw new Error('The server resumed at the wrong offset');
      }
      start = offset;
      total = m[3] === '*' ? null : Number(m[3]);
      r.counts.resumes++;
    } else if (res.status === 200) {
      start = 0;
      const len = Number(header(res, 'content-length'));
      total = Number.isFinite(len) && header(res, 'content-length') !== undefined ? len : null;
    } else if (res.status === 416 && offset > 0) {
      // Our part is already complete or stale: start over.
      await res.body.dump();
      await rm(part, { force: true });
      throw new Error('The server refused the resume range');
    } else {
      throw await failureFrom(res);
    }
    // What a resume needs is written beside the part while the body streams: a part without
    // it (a crash before it landed) is simply downloaded again from the start.
    const metaWritten = atomicWriteFile(
      metaPath,
      JSON.stringify({ validator: validatorOf(res), total } satisfies PartMeta),
    );
    metaWritten.catch(() => undefined);

    const hash = createHash('sha256');
    if (start > 0) await hashFile(part, hash);
    handle = await open(part, start > 0 ? 'a' : 'w');
    let received = start;
    emit(received, total);
    // Hashing each chunk here overlaps with the write of the batch before it.
    const writer = createPartWriter(handle);
    const stall = watchForStall(res.body, r.idleTimeoutMs, `The download of ${item.id}`);
    try {
      for await (const chunk of res.body) {
        stall.touch();
        const buf = chunk as Buffer;
        hash.update(buf);
        received += buf.length;
        const full = writer.push(buf);
        if (full) await full;
        emit(received, total);
      }
    } finally {
      stall.stop();
      // Also when the connection breaks: every byte received is kept in the part, to resume from.
      await writer.flush();
      await metaWritten;
    }
    try {
      await writer.finish();
    } catch (error) {
      // A failed fsync means written pages may never reach the disk, while the page cache
      // still shows them (and a new descriptor would not hear of the error): resuming from
      // this part could make a file that is complete only until the next reboot.
      await handle.close().catch(() => undefined);
      handle = null;
      await rm(part, { force: true });
      await rm(metaPath, { force: true });
      throw error;
    }
    await handle.close();
    handle = null;

    for (const expected of [total, expectedBytes(item, req.format)]) {
      if (expected !== null && received !== expected) {
        await rm(part, { force: true });
        throw new ServiceError('invalid_response', `Downloaded ${received} bytes of ${item.id}, expected ${expected}`);
      }
    }
    const sha256 = hash.digest('hex');
    const known = knownSha256(item, res);
    if (known && known !== sha256) {
      await rm(part, { force: true });
      throw new ServiceError('invalid_response', `The download of ${item.id} does not match its sha256`);
    }
    await rename(part, target);
    await syncDir(dirname(target));
    await rm(metaPath, { force: true });
    await atomicWriteFile(
      sidecarPath,
      `${JSON.stringify(sidecar(current.item, req.context, sha256, received, source), null, 2)}\n`,
    );
    return { id: item.id, path: target, sidecarPath, bytes: received, sha256, source, resumes: r.counts.resumes };
  } catch (error) {
    if (handle) await handle.close().catch(() => undefined);
    throw error;
  }
}

function expectedBytes(item: DownloadableItem, format: string | undefined): number | null {
  // Only a rendition's own size is trusted: an item's `bytes` may count every rendition.
  const mime = format ?? item.mime;
  return item.formats?.find((f) => f.mime === mime)?.bytes ?? null;
}

function knownSha256(item: DownloadableItem, res: RawResponse): string | null {
  const fromItem = (item as Record<string, unknown>)['sha256'];
  if (typeof fromItem === 'string' && /^[0-9a-f]{64}$/i.test(fromItem)) return fromItem.toLowerCase();
  const fromHeader = header(res, 'x-content-sha256');
  if (fromHeader && /^[0-9a-f]{64}$/i.test(fromHeader)) return fromHeader.toLowerCase();
  return null;
}

function sidecar(
  item: DownloadableItem,
  context: DownloadContext | undefined,
  sha256: string,
  bytes: number,
  source: string,
) {
  const i = item as Record<string, unknown>;
  return {
    id: item.id,
    prompt: item.prompt,
    model: item.model,
    modelSlug: i['modelSlug'] ?? null,
    provider: item.provider,
    providerName: i['providerName'] ?? null,
    routing: context?.routing ?? i['routing'] ?? null,
    price: context?.price ?? item.price ?? null,
    sourceImage: context?.sourceImage ?? i['image_url'] ?? i['sourceImage'] ?? null,
    media: item.media,
    mime: item.mime,
    size: item.size,
    duration: item.duration,
    width: item.width ?? null,
    height: item.height ?? null,
    createdAt: item.createdAt,
    url: item.url,
    sha256,
    bytes,
    source,
    downloadedAt: new Date().toISOString(),
    ...(context
      ? Object.fromEntries(Object.entries(context).filter(([k]) => !['routing', 'price', 'sourceImage'].includes(k)))
      : {}),
  };
}
