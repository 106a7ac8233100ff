import type { ModelRecord, ProviderRecord } from '../../shared/api/index.ts';
import type { ModelDefinition } from '../providers/catalog.ts';
import type { LocalProvider } from '../providers/types.ts';

/**
 * Model and provider records for `/models` and `/providers` (DESIGN.md), built from the
 * providers' definitions. Providers made to fail (`--fail-provider`) are listed as unavailable.
 */
export class Catalog {
  readonly models: readonly ModelDefinition[];
  readonly providers: readonly LocalProvider[];
  private readonly failing: ReadonlySet<string>;

  constructor(models: readonly ModelDefinition[], providers: readonly LocalProvider[], failing: ReadonlySet<string>) {
    this.models = models;
    this.providers = providers;
    this.failing = failing;
  }

  modelRecord(model: ModelDefinition, version?: string): ModelRecord {
    const id = `${model.base}/${model.slug}`;
    return {
      id,
      base: model.base,
      slug: model.slug,
      name: model.name,
      version: version ?? model.versions.at(-1) ?? '',
      versions: [...model.versions],
      media: model.media,
      description: model.description,
      parameters: model.parameters,
      providers: this.providers.flatMap((p) => {
        const offer = p.offers.find((o) => o.model === id);
        if (!offer) return [];
        return [
          {
            id: p.id,
            slug: p.slug,
            name: p.name,
            price: offer.price,
            priceUnit: model.media === 'video' ? ('second' as const) : ('image' as const),
            features: [...offer.features],
            sizes: [...offer.sizes],
            status: this.status(p),
          },
        ];
      }),
    };
  }

  providerRecord(p: LocalProvider): ProviderRecord {
    return {
      id: p.id,
      slug: p.slug,
      name: p.name,
      status: this.status(p),
      models: p.offers.map((o) => o.model),
      features: [...new Set(p.offers.flatMap((o) => o.features))],
      description: p.description,
    };
  }

  findProvider(idOrSlug: string): LocalProvider | undefined {
    const text = idOrSlug.trim().toLowerCase();
    return this.providers.find((p) => p.id === text || p.slug === text);
  }

  status(p: LocalProvider): 'available' | 'unavailable' {
    return this.failing.has(p.id) ? 'unavailable' : 'available';
  }
}
