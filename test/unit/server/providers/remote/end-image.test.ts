import { describe, expect, it } from 'vitest';
import type { ProviderTask } from '../../../../../server/providers/remote/contract.ts';
import { providerTask } from './adapter-kit.ts';
import { falInput } from '../../../../../server/providers/remote/fal.ts';
import { checkedInput, InputSchemaRefusal } from '../../../../../server/providers/remote/input-schemas.ts';
import { replicateInput } from '../../../../../server/providers/remote/replicate.ts';
import builtin from '../../../../../server/providers/catalog-file/models.json' with { type: 'json' };

/** The end frame under each provider's own field (docs/providers.md, "End frames"). */

const task = (path: string): ProviderTask => providerTask({ path, modelId: 'x/y:1', prompt: 'the tide comes in' });

const START = 'https://storage.example/start.png';
const END = 'https://storage.example/end.png';

describe('fal', () => {
  it.each([
    'fal-ai/minimax/hailuo-02/standard/image-to-video',
    'fal-ai/bytedance/seedance/v1/lite/image-to-video',
    'fal-ai/luma-dream-machine/ray-2/image-to-video',
  ])('%s gets end_image_url beside image_url, and its schema takes the body', (path) => {
    const body = falInput({ ...task(path), durationSeconds: path.includes('hailuo') ? 6 : 5 }, START, END);
    expect(body).toMatchObject({ image_url: START, end_image_url: END });
    expect(() => checkedInput('fal', path, body)).not.toThrow();
  });

  it('a text-to-video endpoint, which has no end frame field, refuses it rather than drop it', () => {
    const path = 'fal-ai/minimax/hailuo-02/standard/text-to-video';
    expect(() => falInput(task(path), undefined, END)).toThrow(InputSchemaRefusal);
    expect(() => falInput(task(path), undefined, END)).toThrow(/takes no end frame \(no end_image_url/);
  });

  it('without an end frame the body has no end field', () => {
    expect(falInput(task('fal-ai/luma-dream-machine/ray-2/image-to-video'), START)).not.toHaveProperty('end_image_url');
  });
});

describe('Replicate', () => {
  it('Hailuo 02 names it last_frame_image, beside first_frame_image', () => {
    const body = replicateInput({ ...task('minimax/hailuo-02'), durationSeconds: 6 }, START, undefined, END);
    expect(body).toMatchObject({ first_frame_image: START, last_frame_image: END });
    expect(body).not.toHaveProperty('end_image_url');
  });

  it("Ray 2's end field follows its start field's version: end_image with start_image, end_image_url before", () => {
    const path = 'luma/ray-2-720p';
    expect(replicateInput(task(path), START, 'start_image', END)).toMatchObject({ start_image: START, end_image: END });
    expect(replicateInput(task(path), START, 'start_image_url', END)).toMatchObject({
      start_image_url: START,
      end_image_url: END,
    });
  });

  it('Seedance 1 Lite, which takes no end frame on Replicate, refuses it', () => {
    expect(() => replicateInput(task('bytedance/seedance-1-lite'), START, undefined, END)).toThrow(InputSchemaRefusal);
  });
});

describe('the catalog', () => {
  it('lists end_image_url only on offers whose provider can take an end frame for the model', () => {
    const listed: string[] = [];
    for (const model of builtin.models) {
      for (const offer of model.offers as Array<{ provider: string; path: unknown; parameters?: string[] }>) {
        if (!offer.parameters?.includes('end_image_url')) continue;
        listed.push(`${offer.provider} ${model.id}`);
        const path =
          typeof offer.path === 'string' ? offer.path : (offer.path as { image_to_video: string }).image_to_video;
        const build =
          offer.provider === 'fal'
            ? () => falInput(task(path), START, END)
            : () => replicateInput(task(path), START, undefined, END);
        expect(build, `${offer.provider} ${path}`).not.toThrow();
      }
    }
    expect(listed.sort()).toEqual([
      'fal bytedance/seedance-1-lite',
      'fal luma/ray-2',
      'fal minimax/hailuo-02',
      'replicate luma/ray-2',
      'replicate minimax/hailuo-02',
    ]);
  });
});
