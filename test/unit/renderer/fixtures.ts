import { vi } from 'vitest';
import type { IpcClient, Job, LibraryItem } from '../../../shared/ipc/index.ts';
import type { ModelRecord } from '../../../shared/api/model-records.ts';
import { setIpcClient } from '../../../renderer/src/lib/ipc.ts';

type Fn = ReturnType<typeof vi.fn>;
/** Every route a vi.fn; a test sets what the ones it needs resolve to. */
export type FakeIpc = { [D in keyof IpcClient]: { [A in keyof IpcClient[D]]: Fn } };

const DOMAINS: Record<string, string[]> = {
  app: ['info', 'openExternal'],
  settings: ['get', 'update', 'choosePath', 'checkPath', 'setPath'],
  profiles: ['list', 'create', 'update', 'remove', 'activate', 'keyStatus', 'setKey', 'removeKey'],
  models: ['list', 'get'],
  providers: ['list', 'setKey', 'removeKey', 'testKey', 'setEnabled', 'setBaseUrl', 'refreshModels'],
  usage: ['get', 'rateLimit', 'reconcile', 'recover', 'spend'],
  jobs: [
    'submit',
    'submitBatch',
    'list',
    'get',
    'cancel',
    'retry',
    'duplicate',
    'reorder',
    'remove',
    'pause',
    'resume',
    'stats',
    'schedule',
  ],
  uploads: ['fromPath', 'fromBytes', 'probe'],
  library: [
    'query',
    'get',
    'sync',
    'setFavourite',
    'retain',
    'download',
    'reveal',
    'export',
    'useLastFrame',
    'feed',
    'chain',
    'setShotTrim',
    'moveShot',
    'restoreChains',
    'downloadAgain',
  ],
  collections: ['list', 'create', 'rename', 'remove', 'addItems', 'removeItems'],
  media: ['preview', 'trim', 'cancel', 'sequence'],
  events: ['subscribe'],
  compose: ['preview'],
};

export function installFakeIpc(): FakeIpc {
  const fake = Object.fromEntries(
    Object.entries(DOMAINS).map(([d, actions]) => [
      d,
      Object.fromEntries(actions.map((a) => [a, vi.fn(() => Promise.reject(new Error(`${d}.${a} not stubbed`)))])),
    ]),
  ) as unknown as FakeIpc;
  fake.events.subscribe.mockReturnValue(new Promise(() => {}));
  setIpcClient(fake as unknown as IpcClient);
  return fake;
}

export function model(over: Partial<ModelRecord> = {}): ModelRecord {
  return {
    id: 'mdl_a',
    base: 'local',
    slug: 'waves',
    name: 'Waves',
    version: '2',
    versions: ['1', '2'],
    media: 'video',
    description: 'Procedural waves',
    parameters: {
      duration: { min: 2, max: 8, default: 4 },
      size: { values: ['480p', '720p', '1080p'], default: '720p' },
      image_url: { supported: true },
      style: { values: ['noir', 'pastel'] },
    },
    providers: [
      { id: 'p_cheap', slug: 'cheap', price: 0.01, features: ['text_to_video'] },
      { id: 'p_full', slug: 'full', price: 0.011, features: ['text_to_video', 'image_to_video', 'style', 'hd'] },
      {
        id: 'p_pricey',
        slug: 'pricey',
        price: 0.05,
        features: ['text_to_video', 'image_to_video', 'style', 'hd', 'seed'],
      },
    ],
    ...over,
  };
}

export function imageModel(): ModelRecord {
  return model({
    id: 'mdl_img',
    slug: 'stills',
    name: 'Stills',
    media: 'image',
    parameters: { size: { values: ['512x512', '1024x1024'], default: '1024x1024' } },
    providers: [{ id: 'p_img', slug: 'img', price: 0.02, priceUnit: 'image', features: ['text_to_image'] }],
  });
}

export function job(over: Partial<Job> = {}): Job {
  return {
    id: 'job_1',
    state: 'queued',
    request: { kind: 'video', prompt: 'a prompt', model: 'local/waves', routing: 'optimal', public: false },
    createdAt: '2026-01-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    position: 0,
    waitingUntil: null,
    attempts: 0,
    upload: null,
    download: null,
    error: null,
    result: null,
    ...over,
  };
}

export function libraryItem(i: number, over: Partial<LibraryItem> = {}): LibraryItem {
  return {
    item: {
      id: `m_${i}`,
      url: `http://127.0.0.1:1/media/m_${i}.mp4`,
      mime: 'video/mp4',
      user: 'me',
      media: 'video',
      model: 'local/waves',
      provider: 'p_full',
      prompt: `prompt number ${i}`,
      size: '720p',
      duration: 4,
      createdAt: '2026-01-01T00:00:00.000Z',
      modelSlug: 'local/waves:2',
      providerName: 'Full',
      thumbnailUrl: `http://127.0.0.1:1/media/m_${i}.jpg`,
    },
    favourite: false,
    collectionIds: [],
    retentionDeadline: '2026-01-05T00:00:00.000Z',
    lost: false,
    localPath: null,
    localUrl: null,
    ...over,
  };
}
