import { describe, expect, it } from 'vitest';
import type { ProviderAdapter, RemoteProviderId } from '../../../../server/providers/remote/contract.ts';
import type { ProviderOffer, RemoteProvider } from '../../../../server/providers/types.ts';
import { routeRequest } from '../../../../server/routing/route.ts';
import type { RouteRequest, RoutingContext } from '../../../../server/routing/route.ts';
import { ApiError } from '../../../../server/errors.ts';

/**
 * A chosen aspect ratio goes only to providers whose model schema takes it (docs/providers.md,
 * "Request schemas"): Luma's Ray 2 asked 1:1 is not sent to fal, whose Ray 2 has no 1:1.
 */

function adapter(id: RemoteProviderId): ProviderAdapter {
  const never = () => Promise.reject(new Error('not called in routing tests'));
  return {
    id,
    name: id,
    description: '',
    envKey: `${id.toUpperCase()}_KEY`,
    defaultBaseUrl: `https://${id}.example`,
    webhooks: false,
    startImage: 'upload',
    testKey: never,
    submit: never,
    poll: never,
    cancel: never,
  };
}

function remote(id: RemoteProviderId, price: number, path: ProviderOffer['path']): RemoteProvider {
  const offer: ProviderOffer = {
    model: 'luma/ray-2',
    price,
    features: ['text_to_video', 'image_to_video'],
    sizes: ['720p'],
    path,
    durations: [5, 9],
    parameters: ['aspect_ratio', 'loop'],
  };
  return { kind: 'remote', id, slug: id, name: id, description: '', adapter: adapter(id), offers: [offer] };
}

// fal cheapest, so it would be chosen first if the ratio were not checked.
const providers = [
  remote('fal', 0.1, {
    text_to_video: 'fal-ai/luma-dream-machine/ray-2',
    image_to_video: 'fal-ai/luma-dream-machine/ray-2/image-to-video',
  }),
  remote('replicate', 0.2, 'luma/ray-2-720p'),
  remote('luma', 0.3, 'ray-2'),
];
const ctx: RoutingContext = { providers, offerSupportsSize: (o, _m, size) => o.sizes.includes(size) };
const req = (over: Partial<RouteRequest>): RouteRequest => ({
  media: 'video',
  model: 'luma/ray-2',
  size: '720p',
  durationSeconds: 5,
  features: ['text_to_video'],
  parameters: ['aspect_ratio'],
  mode: 'optimal',
  ...over,
});

describe('aspect ratios in routing', () => {
  it('1:1 goes to a provider that takes it, never to fal', () => {
    const ids = routeRequest(ctx, req({ aspectRatio: '1:1' })).map((c) => c.provider.id);
    expect(ids).not.toContain('fal');
    expect(ids[0]).toBe('replicate');
  });

  it('a ratio fal takes may go to fal', () => {
    expect(routeRequest(ctx, req({ aspectRatio: '9:21' }))[0]?.provider.id).toBe('fal');
  });

  it('asking fal by name for 1:1 is a 400 that names the ratios it takes', () => {
    let error: unknown;
    try {
      routeRequest(ctx, req({ aspectRatio: '1:1', provider: 'fal' }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toContain(
      'fal renders aspect ratios 16:9, 9:16, 4:3, 3:4, 21:9, 9:21 (not 1:1)',
    );
  });
});
