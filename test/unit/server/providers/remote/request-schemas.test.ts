import { stat } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { VIDEO_SIZE_PIXELS } from '../../../../../shared/api/offer-sizes.ts';
import models from '../../../../../server/providers/catalog-file/models.json' with { type: 'json' };
import type { CatalogFile } from '../../../../../server/providers/catalog-file/schema.ts';
import { taskAspectRatio } from '../../../../../server/generation/remote-job.ts';
import { ADAPTERS } from '../../../../../server/providers/remote/adapters.ts';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import type { ProviderTask, RemoteProviderId, StartImage } from '../../../../../server/providers/remote/contract.ts';
import { falInput } from '../../../../../server/providers/remote/fal.ts';
import { requestBody as googleBody } from '../../../../../server/providers/remote/google.ts';
import {
  acceptedAspectRatios,
  checkedInput,
  inputProblems,
  shippedInputPaths,
  shippedInputSchema,
} from '../../../../../server/providers/remote/input-schemas.ts';
import { lumaRequest } from '../../../../../server/providers/remote/luma.ts';
import { replicateInput } from '../../../../../server/providers/remote/replicate.ts';
import { requestBody as runwayBody } from '../../../../../server/providers/remote/runway.ts';
import { fakeMedia } from '../../../../fakes/providers/media.ts';

/**
 * A property test per adapter, by plain enumeration (docs/providers.md, "Request schemas"): for every
 * model of the built-in catalog and every provider that offers it, every combination of size,
 * duration, aspect ratio and start frame the app can offer (as routing would send it there) gives a
 * body the model's shipped input schema accepts.
 */

const builtin = models as unknown as CatalogFile;
type Model = CatalogFile['models'][number];
type Offer = Model['offers'][number];

const FRAME_URL = 'https://files.example/frame.png';
let frame: StartImage;

beforeAll(async () => {
  const media = await fakeMedia();
  frame = { path: media.image.path, mime: 'image/png', bytes: (await stat(media.image.path)).size };
});

function pathFor(offer: Offer, which: 'text_to_video' | 'image_to_video' | 'text_to_image'): string | undefined {
  return typeof offer.path === 'string' ? offer.path : offer.path[which];
}

function values(model: Model, name: string): unknown[] | undefined {
  return (model.parameters as Record<string, { values?: unknown[] } | undefined>)[name]?.values;
}

/** Each request the app can send this offer: a task as the service builds it, and the model path. */
function* combinations(model: Model, offer: Offer): Generator<{ task: ProviderTask; path: string; label: string }> {
  const media = model.media;
  const sizes = ((values(model, 'size') as string[] | undefined) ?? offer.sizes).filter((s) =>
    media === 'image' ? true : offer.sizes.includes(s),
  );
  const durations =
    media === 'video' ? ((values(model, 'duration') as number[] | undefined) ?? offer.durations ?? [5]) : [0];
  const ratios = [undefined, ...((values(model, 'aspect_ratio') as string[] | undefined) ?? [])];
  const adapter = ADAPTERS[offer.provider];
  const frames: boolean[] = [];
  if (media === 'image' || offer.features.includes('text_to_video')) frames.push(false);
  if (media === 'video' && offer.features.includes('image_to_video') && adapter?.startImage !== 'none')
    frames.push(true);
  for (const size of sizes) {
    const [w, h] =
      media === 'video'
        ? [
            VIDEO_SIZE_PIXELS[size as keyof typeof VIDEO_SIZE_PIXELS].width,
            VIDEO_SIZE_PIXELS[size as keyof typeof VIDEO_SIZE_PIXELS].height,
          ]
        : size.split('x').map(Number);
    for (const duration of durations.filter((d) => !offer.durations || offer.durations.includes(d))) {
      for (const withFrame of frames) {
        const which = media === 'image' ? 'text_to_image' : withFrame ? 'image_to_video' : 'text_to_video';
        const path = pathFor(offer, which) ?? '';
        for (const ratio of ratios) {
          // Routing sends a chosen ratio only where the offer takes the parameter and its schema the value.
          const takes = ratio !== undefined && (offer.parameters ?? []).includes('aspect_ratio');
          const accepted = acceptedAspectRatios(offer.provider, path);
          if (takes && accepted && !accepted.includes(ratio)) continue;
          const parameters = takes ? { aspect_ratio: ratio } : {};
          const task: ProviderTask = {
            kind: media,
            path,
            modelId: `${model.id}:1`,
            prompt: 'a lighthouse at dusk',
            size,
            width: w!,
            height: h!,
            aspectRatio: taskAspectRatio(w!, h!, parameters),
            durationSeconds: duration,
            count: 1,
            parameters,
            ...(withFrame ? { startImage: frame } : {}),
            signal: new AbortController().signal,
          };
          yield { task, path, label: `${size} ${duration}s ${ratio ?? '(no ratio)'} ${withFrame ? 'frame' : 'text'}` };
        }
      }
    }
  }
}

/** The body an adapter would submit for a task (before the schema check, which runs after). */
async function body(provider: RemoteProviderId, task: ProviderTask): Promise<object> {
  switch (provider) {
    case 'fal':
      return falInput(task, task.startImage ? FRAME_URL : undefined);
    case 'replicate':
      return replicateInput(task, task.startImage ? FRAME_URL : undefined);
    case 'google':
      return googleBody(task);
    case 'runway':
      return runwayBody(task);
    case 'luma':
      return lumaRequest(task);
    default:
      throw new Error(`no schema for ${provider}`);
  }
}

/** Refusals the provider documents and the adapter says before anything is sent (a 400, unpaid). */
function documentedRefusal(provider: string, task: ProviderTask): boolean {
  // Veo 3 on the Gemini API renders 1080p in 16:9 only.
  return provider === 'google' && task.size === '1080p' && task.aspectRatio !== '16:9';
}

const offers = builtin.models.flatMap((model) =>
  model.offers.filter((o) => o.provider !== 'openai').map((offer) => ({ model, offer })),
);

describe('every request the app can offer validates against the model schema', () => {
  for (const provider of ['fal', 'replicate', 'google', 'runway', 'luma'] as const) {
    it(`${provider}: every catalog model, every size, duration, aspect ratio and start frame`, async () => {
      let checked = 0;
      for (const { model, offer } of offers.filter((o) => o.offer.provider === provider)) {
        for (const { task, path, label } of combinations(model, offer)) {
          const where = `${model.id} on ${provider} (${path}) ${label}`;
          expect(shippedInputSchema(provider, path), `${where}: no shipped schema`).toBeDefined();
          if (documentedRefusal(provider, task)) {
            await expect(body(provider, task), where).rejects.toBeInstanceOf(ProviderError);
            continue;
          }
          const sent = checkedInput(provider, path, await body(provider, task));
          expect(inputProblems(shippedInputSchema(provider, path)!.schema, sent), where).toEqual([]);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(0);
    });
  }
});

describe('the shipped schemas', () => {
  it('each names its source page and the day it was read', () => {
    for (const provider of ['fal', 'replicate', 'google', 'runway', 'luma'] as const) {
      for (const path of shippedInputPaths(provider)) {
        const entry = shippedInputSchema(provider, path)!;
        expect(entry.source, path).toMatch(/^https:\/\//);
        expect(entry.checked, path).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
    }
  });
});
