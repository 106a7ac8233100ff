import { z } from 'zod';
import {
  ClipdeskModelRecord,
  ClipdeskProviderRecord,
  ModelListResponse,
  ModelResponse,
  ProviderListResponse,
  ProviderResponse,
} from './model-records.ts';
import { ErrorBody, ErrorCode } from './errors.ts';
import {
  Generation as GenerationRecord,
  GenerationAccepted,
  GenerationListResponse,
  GenerationRecordResponse,
  GenerationResponse,
  GenerationStats,
  ImageGenerationRequest,
  VideoGenerationRequest,
  VideoVariationRequest,
} from './generations.ts';
import { GeneratedItem, MediaFormat, MediaItem, MediaItemResponse, MediaListResponse } from './media.ts';
import { ClipdeskUploadTicket, UploadCompleteResponse, UploadRequest, UploadTicketResponse } from './uploads.ts';
import { RoutingPreviewResponse } from './routing.ts';
import { RetainRequest, UsageResponse } from './usage.ts';
import { WebhookDelivery, WebhookDeliveryListResponse, WebhookEvent } from './webhooks.ts';

/**
 * The wire schemas under their OpenAPI component names. `GET /v1/openapi.json` is generated from
 * these (zod's JSON Schema), so the document cannot drift from what the service validates and
 * the client parses.
 */
export const API_COMPONENTS = {
  Error: ErrorBody,
  ErrorCode,
  MediaFormat,
  MediaItem,
  GeneratedItem,
  MediaList: MediaListResponse,
  MediaItemResponse,
  VideoRequest: VideoGenerationRequest,
  ImageRequest: ImageGenerationRequest,
  GenerationStats,
  Generation: GenerationResponse,
  // docs/workflows.md: asynchronous generations and variations.
  VariationRequest: VideoVariationRequest,
  GenerationRecord,
  GenerationAccepted,
  GenerationRecordResponse,
  GenerationList: GenerationListResponse,
  Model: ClipdeskModelRecord,
  ModelList: ModelListResponse,
  ModelResponse,
  Provider: ClipdeskProviderRecord,
  ProviderList: ProviderListResponse,
  ProviderResponse,
  UploadRequest,
  UploadTicket: ClipdeskUploadTicket,
  UploadTicketResponse,
  UploadCompleteResponse,
  RetainRequest,
  Usage: UsageResponse,
  WebhookEvent,
  WebhookDelivery,
  WebhookDeliveryList: WebhookDeliveryListResponse,
  // docs/workflows.md: the routing preview.
  RoutingPreview: RoutingPreviewResponse,
} as const;
export type ApiComponentName = keyof typeof API_COMPONENTS;

export type JsonSchema = Record<string, unknown>;

const ref = (name: string): string => `#/components/schemas/${name}`;

/**
 * Every component as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Schemas are described as
 * inputs: a field with a default is optional to send, and what the service sends always has it.
 * A component used inside another is referenced, not repeated.
 */
export function apiComponentSchemas(): Record<ApiComponentName, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(API_COMPONENTS)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { uri: ref, io: 'input', unrepresentable: 'any' });
  const out: Partial<Record<ApiComponentName, JsonSchema>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    // Each component is its own document to zod; inside the OpenAPI document they are not.
    const { $id: _id, $schema: _dialect, ...rest } = schema;
    out[id as ApiComponentName] = rest;
  }
  return out as Record<ApiComponentName, JsonSchema>;
}

export interface QueryParameter {
  name: string;
  in: 'query';
  schema: JsonSchema;
  required?: boolean;
}

/** A query schema as OpenAPI parameters (`/media`, and the page of `/models` and `/providers`). */
export function queryParameters(schema: z.ZodType): QueryParameter[] {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, s]) => ({
    name,
    in: 'query' as const,
    schema: s,
    ...(json.required?.includes(name) ? { required: true } : {}),
  }));
}

export { ref as componentRef };
