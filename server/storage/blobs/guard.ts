import type { Readable } from 'node:stream';
import { ApiError } from '../../errors.ts';
import type { BlobStore } from './types.ts';
import { BlobKeyError, BlobNotFoundError, BlobRangeError, BlobTooLargeError } from './types.ts';

/** Seconds a caller told that the storage is unavailable should wait (as /readyz says). */
export const STORAGE_RETRY_AFTER_SECONDS = 5;

/**
 * The service's view of its store: a failure of the store itself (the bucket unreachable, a
 * timeout, a 5xx, a full disk) becomes the 503 a client can retry, with Retry-After, instead of a
 * 500. What the store answers about the request (no such blob, a range, a key, a limit), and
 * failures of the stream being put (the client went away, the request was aborted), pass as they are.
 * The cause goes to the log, never to the client.
 */
export function guardBlobStore(store: BlobStore, log: (message: string) => void): BlobStore {
  const unavailable = (what: string, error: unknown): ApiError => {
    log(
      `file storage (${store.location}) failed to ${what}: ${error instanceof Error ? error.message : String(error)}`,
    );
    return new ApiError(
      'provider_unavailable',
      'the file storage is unavailable; nothing was stored or changed, try again shortly',
      { retry_after: STORAGE_RETRY_AFTER_SECONDS },
      { 'retry-after': String(STORAGE_RETRY_AFTER_SECONDS) },
    );
  };
  const guarded = async <T>(what: string, run: () => Promise<T>, passes?: () => boolean): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (isAnswer(error) || passes?.() === true) throw error;
      throw unavailable(what, error);
    }
  };
  return {
    kind: store.kind,
    location: store.location,
    check: () => store.check(),
    putFile: (key, path, options) => guarded('store a file', () => store.putFile(key, path, options)),
    putStream(key, source: Readable, options) {
      // The source's own failure (and the caller's abort) is the caller's to answer.
      let sourceFailed = false;
      const onError = (): void => {
        sourceFailed = true;
      };
      source.once('error', onError);
      return guarded(
        'store an upload',
        () => store.putStream(key, source, options),
        () => sourceFailed || source.errored !== null || options.signal?.aborted === true,
      ).finally(() => source.off('error', onError));
    },
    move: (from, to, options) => guarded('move a file', () => store.move(from, to, options)),
    get: (key, options) => guarded('read a file', () => store.get(key, options)),
    head: (key) => guarded('look up a file', () => store.head(key)),
    delete: (key) => guarded('delete a file', () => store.delete(key)),
    list: (prefix) => store.list(prefix),
    ...(store.localPath ? { localPath: store.localPath.bind(store) } : {}),
    ...(store.presignGet ? { presignGet: store.presignGet.bind(store) } : {}),
  };
}

/** An answer about the request, not a failure of the store. */
function isAnswer(error: unknown): boolean {
  return (
    error instanceof ApiError ||
    error instanceof BlobNotFoundError ||
    error instanceof BlobRangeError ||
    error instanceof BlobTooLargeError ||
    error instanceof BlobKeyError ||
    (error as { name?: string } | null)?.name === 'AbortError'
  );
}
