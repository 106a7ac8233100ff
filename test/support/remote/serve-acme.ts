/**
 * A standalone service with the Acme test provider registered, in a process of its own, for tests
 * that SIGKILL it mid-job (`clipdesk-service serve` has no way to add an adapter; in production the
 * provider key store registers the real ones). Reads ACME_BASE_URL, ACME_KEY, CLIPDESK_DATA, CLIPDESK_DATABASE_URL and CLIPDESK_STORAGE_URL (as `serve`);
 * logs like `serve` (stderr and the data directory's log file); prints `listening on URL`.
 */
import { createFileLogger } from '../../../shared/node/logger.ts';
import { startService } from '../../../server/index.ts';
import { parseStorage } from '../../../server/cli/locations.ts';
import { openBlobStore } from '../../../server/storage/blobs/index.ts';
import { acmeMotionSettings } from './acme-adapter.ts';

const dataDir = process.env['CLIPDESK_DATA'] ?? '';
const baseUrl = process.env['ACME_BASE_URL'] ?? '';
const apiKey = process.env['ACME_KEY'] ?? '';
const log = createFileLogger({ dataDir, program: 'service' });
const database = process.env['CLIPDESK_DATABASE_URL'];
const lease = process.env['CLIPDESK_LEASE_TIMEOUT'];
const storage = parseStorage(process.env['CLIPDESK_STORAGE_URL'] || undefined, dataDir);
// The disk store is startService's default; a bucket's client ends with the process.
const store = storage.kind === 's3' ? await openBlobStore(storage) : undefined;
const service = await startService({
  dataDir,
  ...(database ? { database, ...(lease ? { generationQueue: { leaseSeconds: Number(lease) } } : {}) } : {}),
  ...(store ? { store } : {}),
  port: 0,
  ...acmeMotionSettings(apiKey, baseUrl),
  remoteTimings: { pollInitialMs: 20, pollMaxMs: 50, stallMs: 2_000 },
  logger: {
    info: (m) => (log.logger.info(m), process.stderr.write(`${m}\n`)),
    warn: (m) => (log.logger.warn(m), process.stderr.write(`warning: ${m}\n`)),
    error: (m) => (log.logger.error(m), process.stderr.write(`error: ${m}\n`)),
  },
});
process.stdout.write(`listening on ${service.url}\n`);
process.once('SIGTERM', () => {
  void service
    .close()
    .then(() => log.close())
    .then(() => process.exit(0));
});
