import type { ModelRecord, ProviderOfferRecord, ProviderRecord } from '../../shared/api/index.ts';
import type { ModelDefinition, ResolvedModel } from '../providers/model-definitions.ts';
import { findModelIn, findOffer } from '../providers/model-definitions.ts';
import type { KeySource, ProviderSettings } from '../providers/provider-keys.ts';
import { last4 } from '../providers/provider-keys.ts';
import type { AdapterSettings, ProviderHealth, RemoteProviderId } from '../providers/remote/contract.ts';
import type { LocalProvider, Provider, ProviderOffer, RemoteProvider } from '../providers/types.ts';

/** A provider as Settings → Providers shows it (RunningService.providerStatus()); never the key. */
export interface ProviderStatus {
  id: RemoteProviderId;
  name: string;
  description: string;
  /** The environment variable its SDK reads (`FAL_KEY`, …). */
  envKey: string;
  configured: boolean;
  /** Where the key in use comes from: the app (keychain), the key file or the environment. */
  keySource?: KeySource;
  /** The key's last 4 characters ('' for keys too short to show any of). */
  last4?: string;
  enabled: boolean;
  /** The base URL in use when overridden; `defaultBaseUrl` otherwise. */
  baseUrl?: string;
  defaultBaseUrl: string;
  health: ProviderHealth;
  /** Model ids it offers. */
  models: string[];
}

export interface CatalogInput {
  /** Every model: the procedural ones and the AI catalog's. */
  models: readonly ModelDefinition[];
  local: readonly LocalProvider[];
  remote: readonly RemoteProvider[];
  /** Local providers made to fail (`--fail-provider`): listed as unavailable. */
  failing: ReadonlySet<string>;
  settings: ProviderSettings;
  /**
   * Health of the remote providers, from the job runner's health tracker. Until that is wired in,
   * startService passes nothing and every provider is ok.
   */
  health?: (id: RemoteProviderId) => ProviderHealth | undefined;
  now?: () => number;
}

/**
 * Models and providers, for `/models`, `/providers`, routing and Settings → Providers. Remote
 * providers count only while configured (a key), enabled and not cooling down after failures; a
 * removed key or a switched-off provider stops routing to it at once.
 */
export class Catalog {
  /** Replaced as a whole when the operator catalog changes (reload). */
  models: readonly ModelDefinition[];
  readonly local: readonly LocalProvider[];
  remote: readonly RemoteProvider[];
  readonly settings: ProviderSettings;
  private readonly failing: ReadonlySet<string>;
  private readonly healthOf: (id: RemoteProviderId) => ProviderHealth | undefined;
  private readonly now: () => number;

  constructor(input: CatalogInput) {
    this.models = input.models;
    this.local = input.local;
    this.remote = input.remote;
    this.failing = input.failing;
    this.settings = input.settings;
    this.healthOf = input.health ?? (() => undefined);
    this.now = input.now ?? Date.now;
  }

  /**
   * The AI models and remote providers of a new operator catalog (a sync, or another node's):
   * requests routed from now on see them; keys, switches and health are the providers' own, by id.
   */
  reload(next: { models: readonly ModelDefinition[]; remote: readonly RemoteProvider[] }): void {
    this.models = next.models;
    this.remote = next.remote;
  }

  get providers(): readonly Provider[] {
    return [...this.local, ...this.remote];
  }

  findModel(idOrSlug: string): ResolvedModel | undefined {
    return findModelIn(this.models, idOrSlug);
  }

  findProvider(idOrSlug: string): Provider | undefined {
    const text = idOrSlug.trim().toLowerCase();
    return this.providers.find((p) => p.id === text || p.slug === text);
  }

  /** Models with at least one provider that is configured and enabled (what the picker shows). */
  listedModels(): ModelDefinition[] {
    return this.models.filter((m) => this.providers.some((p) => this.offered(p) && findOffer(p, m.id)));
  }

  /** Why routing may not use a provider now; undefined when it may (local providers always may). */
  unavailableReason(p: Provider, options: { ignoreCooldown?: boolean } = {}): string | undefined {
    if (p.kind !== 'remote') return undefined;
    if (!this.settings.configured(p.id)) return `no key: ${p.adapter.envKey} is not set and none is stored`;
    if (!this.settings.enabled(p.id)) return 'switched off';
    if (options.ignoreCooldown === true) return undefined;
    const until = this.health(p.id).cooldownUntil;
    if (until !== undefined && Date.parse(until) > this.now()) return `skipped after repeated failures until ${until}`;
    return undefined;
  }

  /** `available`/`unavailable` for local providers, `ok`/`unhealthy` for remote ones. */
  status(p: Provider): 'available' | 'unavailable' | 'ok' | 'unhealthy' {
    if (p.kind === 'remote') return this.health(p.id).status;
    return this.failing.has(p.id) ? 'unavailable' : 'available';
  }

  /** Whether routing uses the provider now. */
  available(p: Provider): boolean {
    return p.kind === 'remote' ? this.unavailableReason(p) === undefined : !this.failing.has(p.id);
  }

  health(id: RemoteProviderId): ProviderHealth {
    return this.healthOf(id) ?? { status: 'ok' };
  }

  /** What the job runner hands the adapter; undefined without a key. */
  adapterSettings(id: RemoteProviderId): AdapterSettings | undefined {
    return this.settings.adapterSettings(id);
  }

  /** Replaces every configured key in a message (adapters promise never to include one; belt and braces). */
  redact(message: string): string {
    let out = message;
    for (const key of this.settings.allKeys()) if (key.length >= 8) out = out.split(key).join('[redacted]');
    return out;
  }

  modelRecord(model: ModelDefinition, version?: string): ModelRecord {
    const priceUnit = model.media === 'video' ? ('second' as const) : ('image' as const);
    return {
      id: model.id,
      base: model.base,
      slug: model.slug,
      name: model.name,
      version: version ?? model.versions.at(-1) ?? '',
      versions: [...model.versions],
      media: model.media,
      description: model.description,
      parameters: model.parameters,
      providers: this.providers.flatMap((p) => {
        const offer = findOffer(p, model.id);
        if (!offer || !this.offered(p)) return [];
        return [
          {
            id: p.id,
            slug: p.slug,
            name: p.name,
            price: offer.price,
            priceUnit,
            features: [...offer.features],
            sizes: [...offer.sizes],
            ...optionalOfferFields(offer),
            status: this.status(p),
          },
        ];
      }),
    };
  }

  providerRecord(p: Provider): ProviderRecord {
    const record: ProviderRecord = {
      id: p.id,
      slug: p.slug,
      name: p.name,
      status: this.status(p),
      models: p.offers.map((o) => o.model),
      features: [...new Set(p.offers.flatMap((o) => o.features))],
      description: p.description,
      kind: p.kind === 'remote' ? 'remote' : 'local',
      configured: p.kind === 'remote' ? this.settings.configured(p.id) : true,
      enabled: p.kind === 'remote' ? this.settings.enabled(p.id) : true,
      available: this.available(p),
      offers: p.offers.map((o) => this.offerRecord(o)),
    };
    if (p.kind === 'remote') {
      const h = this.health(p.id);
      if (h.lastError)
        record.lastError = { class: h.lastError.class, message: this.redact(h.lastError.message), at: h.lastError.at };
      if (h.since) record.since = h.since;
      if (h.cooldownUntil) record.cooldownUntil = h.cooldownUntil;
    }
    return record;
  }

  /** Every remote provider of this build, configured or not, for Settings → Providers. */
  providerStatus(): ProviderStatus[] {
    return this.remote.map((p) => {
      const key = this.settings.key(p.id);
      const baseUrl = this.settings.baseUrl(p.id);
      const h = this.health(p.id);
      return {
        id: p.id,
        name: p.name,
        description: p.description,
        envKey: p.adapter.envKey,
        configured: key !== undefined,
        ...(key ? { keySource: key.source, last4: last4(key.key) } : {}),
        enabled: this.settings.enabled(p.id),
        ...(baseUrl !== undefined ? { baseUrl } : {}),
        defaultBaseUrl: p.adapter.defaultBaseUrl,
        health: h.lastError ? { ...h, lastError: { ...h.lastError, message: this.redact(h.lastError.message) } } : h,
        models: p.offers.map((o) => o.model),
      };
    });
  }

  /** Local providers are always offered; remote ones once configured and enabled. */
  private offered(p: Provider): boolean {
    return p.kind !== 'remote' || (this.settings.configured(p.id) && this.settings.enabled(p.id));
  }

  private offerRecord(o: ProviderOffer): ProviderOfferRecord {
    const media = this.models.find((m) => m.id === o.model)?.media;
    return {
      model: o.model,
      price: o.price,
      priceUnit: media === 'image' ? 'image' : 'second',
      features: [...o.features],
      sizes: [...o.sizes],
      ...optionalOfferFields(o),
    };
  }
}

function optionalOfferFields(o: ProviderOffer) {
  return {
    ...(o.prices ? { prices: o.prices.map((p) => ({ ...p })) } : {}),
    ...(o.durations ? { durations: [...o.durations] } : {}),
    ...(o.parameters ? { parameters: [...o.parameters] } : {}),
    ...(o.priceAsOf ? { priceAsOf: o.priceAsOf } : {}),
    ...(o.priceSource ? { priceSource: o.priceSource } : {}),
    ...(o.priceAsOf ? { priceVerified: o.priceNote === undefined } : {}),
    ...(o.priceNote ? { priceNote: o.priceNote } : {}),
  };
}
