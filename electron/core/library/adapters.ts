import type { DownloadManager } from '../downloads/index.ts';
import type { RetentionDownloader } from './retention.ts';

/** The retention guard saves through the app's download manager (authenticated content endpoint). */
export function downloadManagerAsRetentionDownloader(manager: Pick<DownloadManager, 'download'>): RetentionDownloader {
  return {
    async download(entry, signal) {
      const result = await manager.download({ item: entry.item, signal, context: { savedBy: 'retention-guard' } });
      return { path: result.path };
    },
  };
}
