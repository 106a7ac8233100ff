import { z } from 'zod';
import { Generation } from './generations.ts';
import { PageQuery } from './media.ts';

/** A `webhook_url` is at most this long (characters). */
export const WEBHOOK_URL_MAX_CHARS = 2048;

/** The event types a generation's webhook delivers, one per final status. */
export const WEBHOOK_EVENT_TYPES = ['generation.succeeded', 'generation.failed', 'generation.canceled'] as const;
export const WebhookEventType = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventType>;

/**
 * The body a webhook delivery POSTs (Standard Webhooks payload form): the event type, when the
 * event happened (ISO 8601; the same on every retry) and the final generation.
 */
export const WebhookEvent = z.looseObject({
  type: WebhookEventType,
  timestamp: z.string(),
  data: Generation,
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;

export const WEBHOOK_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export const WebhookDeliveryState = z.enum(WEBHOOK_DELIVERY_STATES);
export type WebhookDeliveryState = z.infer<typeof WebhookDeliveryState>;

/** One delivery as `GET /webhooks/deliveries` lists it. `id` is the `webhook-id` header, kept across retries. */
export const WebhookDelivery = z.looseObject({
  id: z.string(),
  object: z.literal('webhook_delivery'),
  type: WebhookEventType,
  generationId: z.string(),
  url: z.string(),
  state: WebhookDeliveryState,
  /** Attempts made so far. */
  attempts: z.number().int().nonnegative(),
  /** The HTTP status of the last attempt, null when it got no response (or none was made yet). */
  lastStatus: z.number().int().nullable(),
  /** Why the last attempt failed (timeout, refused address, HTTP status…), null after a success. */
  lastError: z.string().nullable(),
  /** ISO 8601; null once delivered or failed. */
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** `GET /webhooks/deliveries`: the calling key's deliveries, newest first. */
export const WebhookDeliveryListResponse = z.looseObject({
  success: z.literal(true),
  result: z.looseObject({ total: z.number().int().nonnegative(), deliveries: z.array(WebhookDelivery) }),
});
export type WebhookDeliveryListResponse = z.infer<typeof WebhookDeliveryListResponse>;

/** `GET /webhooks/deliveries` query parameters: a page, and optionally one state. */
export const WebhookDeliveryListQuery = PageQuery.extend({ state: WebhookDeliveryState.optional() });
export type WebhookDeliveryListQuery = z.infer<typeof WebhookDeliveryListQuery>;
