import { createHash } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ServiceError } from '../api/errors.ts';
import { RetryBudget, retrying } from '../api/retry.ts';
import type { RetryDeps } from '../api/retry.ts';
import type { DownloadableItem, DownloadProgress, DownloadRequest, DownloadResult } from './types.ts';
import { hashFile, readMeta } from './part-file.ts';
import { receive } from './receive.ts';
import type { createContentOpener } from './sources.ts';

/** How a download tries again: how often, what its waits draw on, where it opens the item, who hears its progress. */
export interface Attempts {
  maxAttempts: number;
  /** No byte for this long: the try ends as a broken connection, and the next one resumes. */
  idleTimeoutMs: number;
  retry: RetryDeps;
  open: ReturnType<typeof createContentOpener>;
  listeners: ReadonlySet<(p: DownloadProgress) => void>;
}

/** A file already at the target is the download (unless the request replaces it). */
async function existingDownload(
  req: DownloadRequest,
  target: string,
  sidecarPath: string,
): Promise<DownloadResult | null> {
  const existing = req.replace === true ? null : await stat(target).catch(() => null);
  if (!existing?.isFile()) return null;
  const hash = createHash('sha256');
  await hashFile(target, hash);
  const sha256 = hash.digest('hex');
  return { id: req.item.id, path: target, sidecarPath, bytes: existing.size, sha256, source: 'existing', resumes: 0 };
}

/** What an attempt asks for: the rest of a part whose validator is known, else the whole file. */
async function resumeFrom(
  part: string,
  metaPath: string,
): Promise<{ offset: number; headers: Record<string, string> }> {
  const offset = (await stat(part).catch(() => null))?.size ?? 0;
  const meta = offset > 0 ? await readMeta(metaPath) : null;
  const headers: Record<string, string> = {};
  if (offset > 0 && meta?.validator) {
    headers['range'] = `bytes=${offset}-`;
    headers['if-range'] = meta.validator;
  }
  return { offset, headers };
}

/** Service answers (not found, auth …) are final; broken connections and 5xx are resumed. */
function resumable(error: unknown): boolean {
  return !(error instanceof ServiceError) || error.code === 'network_error' || error.code === 'internal_error';
}

/** The error a download ends with once its attempts are spent. */
function keptFailing(item: DownloadableItem, lastError: unknown): ServiceError {
  if (lastError instanceof ServiceError) return lastError;
  return new ServiceError(
    'network_error',
    `The download of ${item.id} kept failing: ${String((lastError as Error)?.message ?? lastError)}`,
    {
      cause: lastError,
    },
  );
}

/** One download into `target`: attempts, each resuming the part the one before left, until one lands. */
export async function transfer(
  attempts: Attempts,
  req: DownloadRequest,
  target: string,
  signal: AbortSignal,
): Promise<DownloadResult> {
  const { item } = req;
  const sidecarPath = `${target}.json`;
  const part = `${target}.part`;
  const metaPath = `${part}.json`;
  await mkdir(dirname(target), { recursive: true });

  const existing = await existingDownload(req, target, sidecarPath);
  if (existing) return existing;

  const emit = (received: number, total: number | null): void => {
    const p = { id: item.id, path: target, received, total };
    req.onProgress?.(p);
    for (const l of attempts.listeners) l(p);
  };

  const counts = { resumes: 0 };
  /** The item as last seen: its URLs are replaced when they have expired. */
  const current = { item };
  // One budget for all of this download's waits: its resumes' and the client's inside each try.
  const budget = req.retryBudget ?? new RetryBudget(attempts.retry.policy.maxTotalWaitMs);
  const waits = { retryBudget: budget, ...(req.onWait ? { onWait: req.onWait } : {}) };
  const options = {
    what: `the download of ${item.id}`,
    retryable: resumable,
    maxRetries: attempts.maxAttempts - 1,
    budget,
    ...(req.onWait ? { onWait: req.onWait } : {}),
    signal,
  };
  try {
    // Each try resumes the part the one before left (the one retry loop, core/api/retry.ts).
    return await retrying(attempts.retry, options, async () => {
      const { offset, headers } = await resumeFrom(part, metaPath);
      const { res, source } = await attempts.open(current, req.format, headers, signal, waits);
      const idleTimeoutMs = attempts.idleTimeoutMs;
      return receive({
        res,
        source,
        offset,
        req,
        current,
        target,
        sidecarPath,
        part,
        metaPath,
        emit,
        counts,
        idleTimeoutMs,
      });
    });
  } catch (error) {
    if (signal.aborted) throw new ServiceError('canceled', 'The download was cancelled', { cause: error });
    throw keptFailing(item, error);
  }
}
