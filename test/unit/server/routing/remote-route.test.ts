import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadCatalog } from '../../../../server/providers/catalog-file/load.ts';
import { createRemoteProviders } from '../../../../server/providers/remote/providers.ts';
import type { Feature } from '../../../../shared/api/index.ts';
import { Catalog } from '../../../../server/catalog/catalog.ts';
import { offerSupportsSize } from '../../../../server/providers/model-definitions.ts';
import { ProviderSettings } from '../../../../server/providers/provider-keys.ts';
import type { ProviderAdapter, RemoteProviderId } from '../../../../server/providers/remote/contract.ts';
import type { ProviderOffer, RemoteProvider } from '../../../../server/providers/types.ts';
import { routeRequest } from '../../../../server/routing/route.ts';
import type { RouteRequest } from '../../../../server/routing/route.ts';

/** Routing reads only these fields of an adapter; nothing is ever called here. */
function adapter(id: RemoteProviderId, startImage: ProviderAdapter['startImage'] = 'upload'): ProviderAdapter {
  const never = () => Promise.reject(new Error('not called in routing tests'));
  return {
    id,
    name: id,
    description: '',
    envKey: `${id.toUpperCase()}_KEY`,
    defaultBaseUrl: `https://${id}.example`,
    webhooks: false,
    startImage,
    testKey: never,
    submit: never,
    poll: never,
    cancel: never,
  };
}

function remote(
  id: RemoteProviderId,
  offer: Partial<ProviderOffer>,
  startImage?: ProviderAdapter['startImage'],
): RemoteProvider {
  return {
    kind: 'remote',
    id,
    slug: id,
    name: id,
    description: '',
    adapter: adapter(id, startImage),
    offers: [
      {
        model: 'm/video',
        price: 1,
        features: ['text_to_video', 'image_to_video'],
        sizes: ['720p'],
        path: 'x/y',
        ...offer,
      },
    ],
  };
}

const T2V_I2V: Feature[] = ['text_to_video', 'image_to_video'];
const req = (over: Partial<RouteRequest>): RouteRequest => ({
  media: 'video',
  model: 'm/video',
  size: '720p',
  durationSeconds: 5,
  features: ['text_to_video'],
  mode: 'optimal',
  ...over,
});

function setup(
  providers: RemoteProvider[],
  keys: Partial<Record<RemoteProviderId, string>> = {
    fal: 'fal-key-123456',
    replicate: 'rep-key-123456',
    runway: 'run-key-123456',
    luma: 'luma-key-123456',
  },
) {
  const settings = new ProviderSettings({ env: {}, appKeys: keys });
  const catalog = new Catalog({ models: [], local: [], remote: providers, failing: new Set(), settings });
  const route = (r: Partial<RouteRequest>) =>
    routeRequest(
      { providers: catalog.providers, offerSupportsSize, unavailableReason: (p) => catalog.unavailableReason(p) },
      req(r),
    );
  return { settings, catalog, route };
}
const ids = (c: Array<{ provider: { id: string } }>) => c.map((x) => x.provider.id);

describe('routing across remote providers', () => {
  const fal = remote('fal', {
    price: 0.08,
    features: ['text_to_video', 'image_to_video', 'seed'],
    parameters: ['negative_prompt'],
  });
  const replicate = remote('replicate', { price: 0.02, features: ['text_to_video', 'image_to_video'] });

  it('cheapest takes the cheaper provider, listing what it drops', () => {
    const { route } = setup([fal, replicate]);
    const ranked = route({ mode: 'cheapest', features: ['text_to_video', 'seed'], parameters: ['negative_prompt'] });
    expect(ids(ranked)).toEqual(['replicate', 'fal']);
    expect(ranked[0]!.ignoredParameters).toEqual(['seed', 'negative_prompt']);
    expect(ranked[1]!.ignoredParameters).toEqual([]);
  });

  it('compatible and optimal choose by features and model parameters', () => {
    const { route } = setup([fal, replicate]);
    expect(ids(route({ mode: 'compatible', features: ['text_to_video', 'seed'] }))).toEqual(['fal']);
    expect(ids(route({ mode: 'compatible', parameters: ['negative_prompt'] }))).toEqual(['fal']);
    expect(ids(route({ mode: 'optimal', parameters: ['negative_prompt'] }))).toEqual(['fal']);
    // Nothing special asked: both are full matches, and fal is far more than 20 % dearer.
    expect(ids(route({ mode: 'optimal' }))).toEqual(['replicate', 'fal']);
    // A parameter no provider takes is refused under compatible…
    const other = remote('replicate', { price: 0.02, parameters: [] });
    const { route: only } = setup([other]);
    expect(() => only({ mode: 'compatible', parameters: ['negative_prompt'] })).toThrow(
      expect.objectContaining({ status: 422, message: expect.stringContaining('negative_prompt') }),
    );
    // …and dropped, and said so, under optimal.
    expect(only({ mode: 'optimal', parameters: ['negative_prompt'] })[0]!.ignoredParameters).toEqual([
      'negative_prompt',
    ]);
  });

  it('audio keeps a request that asks for sound on a provider that makes it', () => {
    const silent = remote('replicate', { price: 0.2, features: ['text_to_video'] });
    const loud = remote('fal', { price: 0.4, features: ['text_to_video', 'audio'] });
    const { route } = setup([silent, loud]);
    expect(ids(route({ mode: 'compatible', features: ['text_to_video', 'audio'], parameters: ['audio'] }))).toEqual([
      'fal',
    ]);
    const cheapest = route({ mode: 'cheapest', features: ['text_to_video', 'audio'], parameters: ['audio'] });
    expect(cheapest[0]!.ignoredParameters).toEqual(['audio']);
  });

  it('fixed durations are a basic requirement', () => {
    const kling = remote('fal', { price: 0.05, durations: [5, 10] });
    const free = remote('replicate', { price: 0.06 });
    const { route } = setup([kling, free]);
    expect(ids(route({ mode: 'cheapest', durationSeconds: 10 }))).toEqual(['fal', 'replicate']);
    expect(ids(route({ mode: 'cheapest', durationSeconds: 7 }))).toEqual(['replicate']);
    const { route: onlyKling } = setup([kling]);
    expect(() => onlyKling({ durationSeconds: 7 })).toThrow(
      expect.objectContaining({ status: 422, message: expect.stringContaining('5 or 10 seconds') }),
    );
  });

  it('image-to-video skips providers that cannot receive a start image, and a named one gets 422', () => {
    const luma = remote('luma', { price: 0.01 }, 'none');
    const { route } = setup([luma, replicate]);
    expect(ids(route({ mode: 'cheapest', features: T2V_I2V }))).toEqual(['replicate']);
    expect(ids(route({ mode: 'cheapest' }))).toEqual(['luma', 'replicate']);
    expect(() => route({ features: T2V_I2V, provider: 'luma' })).toThrow(
      expect.objectContaining({ status: 422, message: expect.stringContaining('cannot receive a start image') }),
    );
  });

  it('an image-to-video-only offer needs a start image', () => {
    const runway = remote('runway', { price: 0.01, features: ['image_to_video'] });
    const { route } = setup([runway, fal]);
    expect(ids(route({ mode: 'cheapest', features: T2V_I2V }))).toEqual(['runway', 'fal']);
    expect(ids(route({ mode: 'cheapest' }))).toEqual(['fal']);
    expect(() => route({ provider: 'runway' })).toThrow(
      expect.objectContaining({ status: 422, message: expect.stringContaining('start image only') }),
    );
  });

  it('only configured, enabled providers are candidates; a removed key stops routing at once', () => {
    const { route, settings, catalog } = setup([fal, replicate], { fal: 'fal-key-123456' });
    expect(ids(route({ mode: 'cheapest' }))).toEqual(['fal']);
    expect(() => route({ provider: 'replicate' })).toThrow(
      expect.objectContaining({ status: 503, message: expect.stringContaining('no key') }),
    );
    settings.setAppKey('replicate', 'rep-key-123456');
    expect(ids(route({ mode: 'cheapest' }))).toEqual(['replicate', 'fal']);
    settings.setEnabled('replicate', false);
    expect(ids(route({ mode: 'cheapest' }))).toEqual(['fal']);
    settings.setEnabled('replicate', true);
    settings.setAppKey('fal', null);
    settings.setAppKey('replicate', null);
    expect(() => route({ mode: 'cheapest' })).toThrow(
      expect.objectContaining({
        status: 503,
        message: expect.stringContaining('no provider that offers m/video can be used now'),
      }),
    );
    expect(catalog.providerRecord(fal)).toMatchObject({ configured: false, available: false, status: 'ok' });
  });

  it('a provider cooling down after failures is skipped until then', () => {
    const settings = new ProviderSettings({ env: {}, appKeys: { fal: 'fal-key-123456', replicate: 'rep-key-123456' } });
    const now = Date.parse('2026-11-23T12:00:00Z');
    const catalog = new Catalog({
      models: [],
      local: [],
      remote: [fal, replicate],
      failing: new Set(),
      settings,
      now: () => now,
      health: (id) =>
        id === 'replicate'
          ? {
              status: 'unhealthy',
              since: '2026-11-23T11:59:00Z',
              cooldownUntil: '2026-11-23T12:05:00Z',
              lastError: {
                class: 'auth',
                message: 'replicate refused the key rep-key-123456',
                at: '2026-11-23T11:59:00Z',
              },
            }
          : undefined,
    });
    const ranked = routeRequest(
      { providers: catalog.providers, offerSupportsSize, unavailableReason: (p) => catalog.unavailableReason(p) },
      req({ mode: 'cheapest' }),
    );
    expect(ids(ranked)).toEqual(['fal']);
    const record = catalog.providerRecord(replicate);
    expect(record).toMatchObject({ status: 'unhealthy', since: '2026-11-23T11:59:00Z', lastError: { class: 'auth' } });
    // Adapters promise never to put a key into a message; the record redacts one anyway.
    expect(JSON.stringify(record)).not.toContain('rep-key-123456');
  });
});

describe('routing over the built-in catalog', () => {
  it('picks among real offers at different prices by mode', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'clipdesk-route-'));
    try {
      const loaded = await loadCatalog(dir);
      const remotes = createRemoteProviders(loaded.offers, {
        fal: adapter('fal'),
        replicate: adapter('replicate'),
        luma: adapter('luma', 'none'),
      });
      const { route } = setup(remotes);
      const wan = { model: 'wan/v2.2', durationSeconds: 5 };
      // Wan 2.2: Replicate at $0.02/s, fal at $0.08/s; only fal takes a negative prompt.
      expect(ids(route({ ...wan, mode: 'cheapest', parameters: ['negative_prompt'] }))).toEqual(['replicate', 'fal']);
      expect(ids(route({ ...wan, mode: 'compatible', parameters: ['negative_prompt'] }))).toEqual(['fal']);
      // Ray 2: Luma is cheapest, but cannot receive a start image privately here.
      const ray = { model: 'luma/ray-2', durationSeconds: 9 };
      expect(ids(route({ ...ray, mode: 'cheapest' }))).toEqual(['luma', 'replicate', 'fal']);
      expect(ids(route({ ...ray, mode: 'cheapest', features: T2V_I2V }))).toEqual(['replicate', 'fal']);
      // Veo 3 Fast: only fal renders 4 seconds.
      expect(ids(route({ model: 'google/veo-3-fast', durationSeconds: 4, mode: 'cheapest' }))).toEqual(['fal']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
