import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { ApiClient } from '../core/api/index.ts';
import type { DownloadManager } from '../core/downloads/index.ts';
import type { JobDownloader, JobQueue, StartFrameUploader } from '../core/jobs/index.ts';
import type { LibraryStore, Shot } from '../core/library/index.ts';
import { readSidecarLineages, sidecarLineage, writeSidecarLineage } from '../core/library/index.ts';
import type { Uploader } from '../core/uploads/index.ts';

/**
 * What the sidecar of a job's result records beyond the item itself (docs/workflows.md): the routing it
 * was asked with, the provider's display name, the start frame (a lasting reference and the
 * SHA-256 of the bytes uploaded) and, for "Continue this shot", its lineage. The queue stays
 * unaware: these wrap the uploader and downloader the queue is given.
 */
export interface UploadedFrame {
  sha256: string;
  mediaId: string;
  url: string;
}

/** The queue's start-frame uploader, remembering what each path's upload sent (by path). */
export function recordingUploader(uploader: Uploader): StartFrameUploader & {
  uploaded(path: string): UploadedFrame | null;
} {
  const byPath = new Map<string, UploadedFrame>();
  return {
    async upload(source, options) {
      const r = await uploader.upload(source, options);
      byPath.set(source.path, { sha256: r.sha256, mediaId: r.item.id, url: r.url });
      return { url: r.url };
    },
    uploaded: (path) => byPath.get(path) ?? null,
  };
}

async function hashFile(file: string): Promise<string | null> {
  const hash = createHash('sha256');
  try {
    await pipeline(createReadStream(file), hash);
    return hash.digest('hex');
  } catch {
    return null;
  }
}

export interface LineageDownloaderOptions {
  downloads: Pick<DownloadManager, 'download'>;
  library: LibraryStore;
  queue: () => Pick<JobQueue, 'get'>;
  api: Pick<ApiClient, 'listProviders'>;
  uploads: ReturnType<typeof recordingUploader>;
  /** The embedded engine's URLs die with the run: sidecars name its media `clipdesk-media:<id>`. */
  embedded: boolean;
}

/** The queue's downloader: the download manager with the job's facts in the sidecar. */
export function lineageDownloader(o: LineageDownloaderOptions): JobDownloader {
  let names: Promise<Map<string, string>> | null = null;
  const providerName = async (id: string): Promise<string | null> => {
    // The same query as the providers panel's first page, so the session's one cached list answers both.
    names ??= o.api.listProviders({ limit: 100, page: 0 }).then(
      (page) => new Map(page.providers.flatMap((p) => [[p.id, p.name] as const, [p.slug, p.name] as const])),
      () => {
        names = null; // try again next time
        return new Map<string, string>();
      },
    );
    return (await names).get(id) ?? null;
  };

  return {
    async download(request) {
      const jobId = typeof request.context?.['jobId'] === 'string' ? request.context['jobId'] : null;
      const job = jobId ? o.queue().get(jobId) : null;
      const context: Record<string, unknown> = { ...request.context };
      if (job) {
        // The service's default when the request named none.
        context['routing'] = job.request.routing ?? 'optimal';
        const frame = job.startFrame ? o.uploads.uploaded(job.startFrame) : null;
        const sha256 = frame?.sha256 ?? (job.startFrame ? await hashFile(job.startFrame) : null);
        const image = frame
          ? o.embedded
            ? `clipdesk-media:${frame.mediaId}`
            : frame.url
          : typeof job.request.image_url === 'string'
            ? job.request.image_url
            : null;
        if (image) context['sourceImage'] = image;
        if (sha256) context['sourceImageSha256'] = sha256;
        const parentId = o.library.chains.jobParent(job.id);
        if (parentId) {
          const { shot, root } = o.library.chains.continueShot(request.item.id, parentId, { sha256, image });
          context['lineage'] = sidecarLineage(shot);
          if (root) await updateSidecarOf(o.library, root);
        }
      }
      const name = await providerName(request.item.provider);
      if (name) context['providerName'] = name;
      return o.downloads.download({ ...request, context });
    },
  };
}

/** Rewrites the lineage in the sidecar of a downloaded item (a first shot, a new trim). */
export async function updateSidecarOf(library: LibraryStore, shot: Shot): Promise<void> {
  const entry = library.get(shot.itemId);
  if (entry?.downloadedPath) await writeSidecarLineage(`${entry.downloadedPath}.json`, shot);
}

const RESTORED = 'shots_restored_from_sidecars';

/**
 * Puts shot chains back from the sidecars in the download folder: a library index made anew
 * (deleted, or a new machine with the same download folder) keeps its chains. Runs once per index
 * unless `force`. Returns how many shots were added.
 */
export async function restoreChainsFromSidecars(
  library: LibraryStore,
  downloadDir: string,
  force = false,
): Promise<number> {
  if (!force && library.getMeta(RESTORED) !== null) return 0;
  const found = await readSidecarLineages(downloadDir);
  const added = library.chains.restore(found);
  library.setMeta(RESTORED, String(Date.now()));
  return added;
}
