import { describe, expect, it } from 'vitest';
import { buildOperatorDocument } from '../../../../server/catalog/sync/build.ts';
import { providerModelMap } from '../../../../server/catalog/sync/mapping.ts';
import models from '../../../../server/providers/catalog-file/models.json' with { type: 'json' };
import type { CatalogFile } from '../../../../server/providers/catalog-file/schema.ts';
import { ProviderError } from '../../../../server/providers/remote/contract.ts';
import { checkedInput } from '../../../../server/providers/remote/input-schemas.ts';

/** A synced model keeps the input schema its provider listed, and requests are checked against it. */

const schema = {
  properties: {
    prompt: { type: 'string' },
    duration: { enum: ['5', '10'] },
    aspect_ratio: { enum: ['16:9', '9:16'] },
  },
  required: ['prompt'],
};

describe('synced input schemas', () => {
  it('an offer the sync writes carries each path’s input schema', () => {
    const { document } = buildOperatorDocument({
      builtin: models as unknown as CatalogFile,
      previous: undefined,
      read: [
        {
          provider: 'fal',
          listing: {
            models: [
              {
                provider: 'fal',
                id: 'acme-ai/clip/text-to-video',
                task: 'text_to_video',
                name: 'Acme Clip',
                description: 'A clip model.',
                input: schema,
                price: { usd: 0.1, unit: 'seconds' },
                page: 'https://fal.ai/models/acme-ai/clip/text-to-video',
              },
            ],
            skipped: 0,
            prices: 1,
          },
        },
      ],
      map: providerModelMap(),
      day: '2026-12-06',
      falPlatformUrl: 'https://api.fal.ai/v1',
    });
    const offer = document.models.flatMap((m) => m.offers ?? []).find((o) => o.provider === 'fal');
    expect(offer?.inputSchemas?.['acme-ai/clip/text-to-video']).toEqual({ type: 'object', ...schema });
  });

  it('a body the synced schema refuses is refused before submitting', () => {
    const entry = { schema: { type: 'object', ...schema } };
    expect(() =>
      checkedInput('fal', 'acme-ai/clip/text-to-video', { prompt: 'x', aspect_ratio: '1:1' }, entry),
    ).toThrow(ProviderError);
    expect(checkedInput('fal', 'acme-ai/clip/text-to-video', { prompt: 'x', aspect_ratio: '9:16' }, entry)).toEqual({
      prompt: 'x',
      aspect_ratio: '9:16',
    });
  });
});
