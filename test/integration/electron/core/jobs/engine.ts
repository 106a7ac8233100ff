import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TierName } from '../../../../../shared/api/index.ts';
import { startService } from '../../../../../server/index.ts';
import type { RunningService, StartServiceOptions } from '../../../../../server/index.ts';
import { createApiClient } from '../../../../../electron/core/api/index.ts';
import type { ApiClient, ApiClientOptions } from '../../../../../electron/core/api/index.ts';

/** The real Local engine in a temp directory, and clients for keys on it. */
export interface TestEngine {
  service: RunningService;
  dir: string;
  client(user: string, tier: TierName, options?: Partial<ApiClientOptions>): Promise<ApiClient>;
  close(): Promise<void>;
}

export async function startEngine(options: Partial<StartServiceOptions> = {}): Promise<TestEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'clipdesk-engine-'));
  const service = await startService({ dataDir: join(dir, 'service'), port: 0, ...options });
  const clients: ApiClient[] = [];
  return {
    service,
    dir,
    async client(user, tier, opts = {}) {
      const { key } = await service.createKey({ user, tier });
      const api = createApiClient({ baseUrl: service.url, getKey: () => key, ...opts });
      clients.push(api);
      return api;
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.dispose()));
      await service.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Small, fast requests for the procedural models. */
export const tinyVideo = (prompt: string) => ({ model: 'clipdesk/motion', prompt, size: '360p', duration: 2 });
export const tinyImage = (prompt: string) => ({ model: 'clipdesk/still', prompt, size: '256x256' });
