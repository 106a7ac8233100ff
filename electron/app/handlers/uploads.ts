import { randomUUID } from 'node:crypto';
import type { UploadResult } from '../../../shared/ipc/schemas/uploads.ts';
import type { UploadResult as CoreUploadResult } from '../../core/uploads/index.ts';
import type { EventBus } from '../events.ts';
import type { ServiceSession, SessionGetter } from '../types.ts';

function uploadsResult(r: CoreUploadResult, maxDimension: number | undefined): UploadResult {
  return {
    mediaId: r.item.id,
    url: r.url,
    mime: r.mime,
    bytes: r.bytes,
    width: r.width,
    height: r.height,
    reused: r.deduplicated,
    warnings: r.resized ? [`Downsized to fit ${maxDimension ?? 'the model'}px.`] : [],
  };
}

export function uploadHandlers(session: SessionGetter, bus: EventBus) {
  const run = async (
    source: Parameters<ServiceSession['uploader']['upload']>[0],
    transferId: string | undefined,
    maxDimension: number | undefined,
    signal?: AbortSignal,
  ) => {
    const s = await session();
    const id = transferId ?? `upload:${randomUUID()}`;
    const progress = (done: number, total: number | null, state: 'running' | 'done' | 'failed', error: string | null) =>
      bus.publish({
        type: 'transfer.progress',
        transfer: { id, direction: 'upload', jobId: null, itemId: null, done, total, state, error },
      });
    try {
      const result = await s.uploader.upload(source, {
        ...(signal ? { signal } : {}),
        onProgress: (p) => progress(p.sent, p.total, 'running', null),
        ...(maxDimension ? { downsize: { maxWidth: maxDimension, maxHeight: maxDimension } } : {}),
      });
      progress(result.bytes, result.bytes, 'done', null);
      return uploadsResult(result, maxDimension);
    } catch (error) {
      progress(0, null, 'failed', error instanceof Error ? error.message : String(error));
      throw error;
    }
  };
  return {
    fromPath: (
      {
        path,
        transferId,
        maxDimension,
      }: { path: string; transferId?: string | undefined; maxDimension?: number | undefined },
      signal?: AbortSignal,
    ) => run({ path }, transferId, maxDimension, signal),
    fromBytes: async (
      {
        file,
        transferId,
        maxDimension,
      }: { file: File; transferId?: string | undefined; maxDimension?: number | undefined },
      signal?: AbortSignal,
    ) =>
      run(
        { buffer: new Uint8Array(await file.arrayBuffer()), filename: file.name || 'upload' },
        transferId,
        maxDimension,
        signal,
      ),
  };
}
