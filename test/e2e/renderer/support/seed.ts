import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createLibraryStore, openDatabase } from '../../../../electron/core/library/index.ts';
import type { MediaItem } from '../../../../shared/api/index.ts';
import { setTier } from '../../../../server/auth/api-keys.ts';
import { openDatabase as openServiceDb } from '../../../../server/storage/db.ts';
import { newMediaId } from '../../../../server/storage/layout.ts';
import { insertMedia } from '../../../../server/storage/media-repo.ts';
import { syntheticPrompt } from '../../../support/synthetic-prompts.ts';

/** The prompt of seeded item `i`. */
export const seedPrompt = syntheticPrompt;

/**
 * A long-time creator's library, written before the app starts: `count` items in the Local
 * engine's own store (so sync finds them on the service, as it would) and the same items in the
 * profile's library index (so the first sync does not have to fetch 10,000 of them under the
 * rate limit). Every fifth item is an image. The grid, filters and search then run on the real index.
 */
export async function seedLibrary(dataDir: string, count: number): Promise<void> {
  const dir = join(dataDir, 'profiles', 'local');
  mkdirSync(dir, { recursive: true });
  const now = Date.now();
  const engineDir = join(dataDir, 'engine');
  mkdirSync(engineDir, { recursive: true });
  const ids = Array.from({ length: count }, () => newMediaId());
  const service = openServiceDb(engineDir);
  await setTier(service, now, 'local', 'pro');
  await service.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const image = i % 5 === 0;
      await insertMedia(tx, {
        id: ids[i]!,
        user_id: 'local',
        key_id: null,
        kind: image ? 'image' : 'video',
        model: image ? 'clipdesk/still' : 'clipdesk/motion',
        model_version: image ? '1.0' : '1.1',
        provider_id: 'local-swift',
        provider_slug: 'swift',
        provider_name: 'Local Swift',
        prompt: seedPrompt(i),
        size: image ? '1024x1024' : '720p',
        duration: image ? 0 : 4,
        width: 1280,
        height: 720,
        mime: image ? 'image/png' : 'video/mp4',
        files: [{ name: image ? 'image.png' : 'video.mp4', mime: image ? 'image/png' : 'video/mp4', bytes: 1000 }],
        thumbnail: 'thumbnail.jpg',
        bytes: 1000,
        price: 0.04,
        public: 0,
        created_at: now - (count - i) * 60_000,
        expires_at: now + 86_400_000 * 60,
      });
    }
  });
  await service.close();
  const db = openDatabase(join(dir, 'library.db'));
  const store = createLibraryStore({ db, now: () => now, retentionDays: () => 90 });
  let batch: MediaItem[] = [];
  for (let i = 0; i < count; i++) {
    const image = i % 5 === 0;
    batch.push({
      id: ids[i]!,
      url: `http://127.0.0.1:9/v1/files/${i}/${image ? 'image.png' : 'video.mp4'}`,
      mime: image ? 'image/png' : 'video/mp4',
      user: 'local',
      media: image ? 'image' : 'video',
      model: image ? 'clipdesk/still' : 'clipdesk/motion',
      modelSlug: image ? 'clipdesk/still:1.0' : 'clipdesk/motion:1.1',
      provider: 'local-swift',
      providerName: 'Local Swift',
      prompt: seedPrompt(i),
      size: image ? '1024x1024' : '720p',
      duration: image ? 0 : 4,
      createdAt: new Date(now - (count - i) * 60_000).toISOString(),
    });
    if (batch.length === 1000) {
      store.upsert(batch);
      batch = [];
    }
  }
  if (batch.length) store.upsert(batch);
  db.close();
}

/** `count` public images by another user of the Local engine, for the public feed. */
export async function seedPublicMedia(dataDir: string, user: string, prompts: string[]): Promise<void> {
  const engineDir = join(dataDir, 'engine');
  mkdirSync(engineDir, { recursive: true });
  const now = Date.now();
  const service = openServiceDb(engineDir);
  await setTier(service, now, user, 'free');
  await service.transaction(async (tx) => {
    for (const [i, prompt] of prompts.entries()) {
      await insertMedia(tx, {
        id: newMediaId(),
        user_id: user,
        key_id: null,
        kind: 'image',
        model: 'clipdesk/still',
        model_version: '1.0',
        provider_id: 'local-swift',
        provider_slug: 'swift',
        provider_name: 'Local Swift',
        prompt,
        size: '1024x1024',
        duration: 0,
        width: 1024,
        height: 1024,
        mime: 'image/png',
        files: [{ name: 'image.png', mime: 'image/png', bytes: 1000 }],
        thumbnail: 'thumbnail.jpg',
        bytes: 1000,
        price: 0.04,
        public: 1,
        created_at: now - i * 60_000,
        expires_at: now + 86_400_000 * 30,
      });
    }
  });
  await service.close();
}

/** One take for `seedTakes`: its prompt, its age, and the take (by its place in the list) it is a variation of. */
export interface SeedTake {
  prompt: string;
  minutesAgo: number;
  variationOf?: number;
  price?: number;
}

/**
 * A few video takes with their lineage and prices, in the Local engine's store and the profile's
 * library index alike (as `seedLibrary`), for the Library's groups and stacks. Returns their ids.
 */
export async function seedTakes(dataDir: string, takes: readonly SeedTake[]): Promise<string[]> {
  const dir = join(dataDir, 'profiles', 'local');
  mkdirSync(dir, { recursive: true });
  const engineDir = join(dataDir, 'engine');
  mkdirSync(engineDir, { recursive: true });
  const now = Date.now();
  const ids = takes.map(() => newMediaId());
  const lineage = (t: SeedTake) => (t.variationOf === undefined ? undefined : ids[t.variationOf]);
  const service = openServiceDb(engineDir);
  await setTier(service, now, 'local', 'pro');
  await service.transaction(async (tx) => {
    for (const [i, t] of takes.entries()) {
      const source = lineage(t);
      await insertMedia(tx, {
        id: ids[i]!,
        user_id: 'local',
        key_id: null,
        kind: 'video',
        model: 'clipdesk/motion',
        model_version: '1.1',
        provider_id: 'local-swift',
        provider_slug: 'swift',
        provider_name: 'Local Swift',
        prompt: t.prompt,
        size: '720p',
        duration: 4,
        width: 1280,
        height: 720,
        mime: 'video/mp4',
        files: [{ name: 'video.mp4', mime: 'video/mp4', bytes: 1000 }],
        thumbnail: 'thumbnail.jpg',
        bytes: 1000,
        price: t.price ?? 0.04,
        public: 0,
        created_at: now - t.minutesAgo * 60_000,
        expires_at: now + 86_400_000 * 60,
        ...(source ? { variation_of: source } : {}),
      });
    }
  });
  await service.close();
  const db = openDatabase(join(dir, 'library.db'));
  const store = createLibraryStore({ db, now: () => now, retentionDays: () => 90 });
  store.upsert(
    takes.map((t, i): MediaItem => {
      const source = lineage(t);
      return {
        id: ids[i]!,
        url: `http://127.0.0.1:9/v1/files/${ids[i]}/video.mp4`,
        mime: 'video/mp4',
        user: 'local',
        media: 'video',
        model: 'clipdesk/motion',
        modelSlug: 'clipdesk/motion:1.1',
        provider: 'local-swift',
        providerName: 'Local Swift',
        prompt: t.prompt,
        size: '720p',
        duration: 4,
        price: t.price ?? 0.04,
        createdAt: new Date(now - t.minutesAgo * 60_000).toISOString(),
        ...(source ? { variationOf: source } : {}),
      };
    }),
  );
  db.close();
  return ids;
}
