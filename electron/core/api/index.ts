export { createApiClient } from './client.ts';
export type {
  ApiClient,
  ApiClientOptions,
  ApiClientState,
  AsyncGenerationHooks,
  FetchOptions,
  FollowedGenerationOptions,
  GenerationListQuery,
  GenerationOperation,
  GenerationPage,
  VideoVariationInput,
  GenerationOptions,
  HeaderBag,
  KeyGetter,
  MediaPage,
  ModelPage,
  PageInput,
  ProviderPage,
  RawResponse,
  RequestOptions,
} from './client-types.ts';
export { ServiceError, errorCodeFor, isServiceCode, isServiceError } from './errors.ts';
export type { ServiceErrorCode, ServiceErrorInit } from './errors.ts';
export { RateLimitTracker, EMPTY_RATE_LIMIT } from './rate-limit.ts';
export type { RateLimitState } from './rate-limit.ts';
export { DEFAULT_RETRY_POLICY, backoffDelay, rateLimitDelay, realSleep } from './retry.ts';
export type { RetryPolicy, Sleep } from './retry.ts';
export { createApiDispatcher } from './dispatcher.ts';
export { newIdempotencyKey } from './idempotency.ts';
export { isUnreachable } from './unreachable.ts';
export { withOfflineCatalog } from './offline-catalog.ts';
export { CATALOG_CACHE_MS, withCatalogCache } from './catalog-cache.ts';
export type { CatalogCache } from './catalog-cache.ts';
export { DEFAULT_POLL, generationResult, pollDelay, stepLabel } from './generations.ts';
export type { GenerationStart, PollPolicy, WaitNotice } from './generations.ts';
export { listAllModels } from './all-models.ts';
