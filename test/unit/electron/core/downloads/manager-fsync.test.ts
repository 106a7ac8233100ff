import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type * as FsPromises from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The next fsync of a `.part` file fails with EIO, as a disk that lost written pages would. */
const failures = { nextPartSync: false };

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const open = async (...args: Parameters<typeof actual.open>): Promise<FileHandle> => {
    const handle = await actual.open(...args);
    if (!String(args[0]).endsWith('.part')) return handle;
    const sync = handle.sync.bind(handle);
    handle.sync = () => {
      if (!failures.nextPartSync) return sync();
      failures.nextPartSync = false;
      return Promise.reject(Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }));
    };
    return handle;
  };
  return { ...actual, open, default: { ...actual, open } };
});

import { downloadItem } from './fixtures.ts';

const { createApiClient } = await import('../../../../../electron/core/api/index.ts');
const { createDownloadManager } = await import('../../../../../electron/core/downloads/index.ts');

const payload = randomBytes(3_000_000);
const sha = createHash('sha256').update(payload).digest('hex');

let server: Server;
let origin: string;
let seen: IncomingHttpHeaders[];
let dir: string;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (range && req.headers['if-range'] === '"v1"') {
      const start = Number(range[1]);
      res.writeHead(206, {
        etag: '"v1"',
        'content-length': payload.length - start,
        'content-range': `bytes ${start}-${payload.length - 1}/${payload.length}`,
      });
      res.end(payload.subarray(start));
      return;
    }
    res.writeHead(200, { etag: '"v1"', 'content-length': payload.length });
    res.end(payload);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-dl-fsync-'));
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await rm(dir, { recursive: true, force: true });
});

describe('download manager, when the disk fails the fsync', () => {
  it('does not trust the part it wrote: the next attempt downloads it all again', async () => {
    const api = createApiClient({ baseUrl: `${origin}/v1`, getKey: () => 'sk-test' });
    try {
      const manager = createDownloadManager({ api, dir, sleep: () => Promise.resolve() });
      failures.nextPartSync = true;
      const res = await manager.download({
        item: downloadItem(origin, payload.length),
      });
      expect(failures.nextPartSync).toBe(false);
      expect(res.resumes).toBe(0);
      // Two whole downloads: the second from the start, without Range or If-Range.
      expect(seen).toHaveLength(2);
      expect(seen.filter((h) => h.range !== undefined || h['if-range'] !== undefined)).toEqual([]);
      expect(res.sha256).toBe(sha);
      expect(
        createHash('sha256')
          .update(await readFile(res.path))
          .digest('hex'),
      ).toBe(sha);
    } finally {
      await api.dispose();
    }
  });
});
