import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { WEBHOOK_URL_MAX_CHARS } from '../../shared/api/index.ts';
import { ApiError } from '../errors.ts';
import type { HostLookup } from '../net/host-lookup.ts';
import { isPublicAddress } from '../net/public-address.ts';
import { hasUnsafeCharacters } from '../generation/url-fields.ts';

/** Where webhooks may go: public addresses only, unless the operator allowed private ones. */
export interface WebhookTargetPolicy {
  allowPrivate: boolean;
  lookup: HostLookup;
}

const PRIVATE_HINT =
  'loopback, private and link-local addresses are refused (an operator can allow them with --allow-private-webhooks)';

function invalid(message: string): ApiError {
  return new ApiError('invalid_request_error', message);
}

/**
 * The checks that need no DNS: a string, at most 2,048 characters, no whitespace or control
 * character, an http(s) URL without credentials, no private IP literal.
 */
export function parseWebhookUrl(raw: string, policy: Pick<WebhookTargetPolicy, 'allowPrivate'>): URL {
  if (raw.length > WEBHOOK_URL_MAX_CHARS)
    throw invalid(`webhook_url must be at most ${WEBHOOK_URL_MAX_CHARS} characters`);
  // The URL parser would drop or encode them: the address used would not be the one stored.
  if (hasUnsafeCharacters(raw))
    throw invalid('webhook_url must not contain whitespace or control characters (percent-encode them)');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('webhook_url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('webhook_url must be an http(s) URL');
  // Deliveries carry no Authorization, and a password would be stored and shown with the URL.
  if (url.username !== '' || url.password !== '')
    throw invalid(
      'webhook_url must not carry credentials (user:password@): verify the webhook-signature header of each delivery with the key’s webhook secret instead',
    );
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!policy.allowPrivate && isIP(host) !== 0 && !isPublicAddress(host))
    throw invalid(`webhook_url must be a public address (${host} is not); ${PRIVATE_HINT}`);
  return url;
}

/**
 * The request-time check of a `webhook_url` (ServiceContext.checkWebhookTarget): the form, and
 * every address the host resolves to now; resolves with the normalized URL, the one to store and use. Delivery checks again where it connects
 * (deliveryAgent), because DNS may answer differently by then.
 */
export async function checkWebhookTarget(raw: string, policy: WebhookTargetPolicy): Promise<string> {
  const url = parseWebhookUrl(raw, policy);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (policy.allowPrivate || isIP(host) !== 0) return url.href;
  let found: Array<{ address: string }>;
  try {
    found = await policy.lookup(host);
  } catch {
    throw invalid(`webhook_url's host ${host} does not resolve`);
  }
  if (found.length === 0) throw invalid(`webhook_url's host ${host} does not resolve`);
  const bad = found.find((a) => !isPublicAddress(a.address));
  if (bad) throw invalid(`webhook_url must be a public address (${host} resolves to ${bad.address}); ${PRIVATE_HINT}`);
  return url.href;
}

/** A connection refused because its host resolved to an address the policy does not allow. */
export class RefusedAddressError extends Error {
  constructor(host: string, address: string) {
    super(`${host} resolves to ${address}, which is not a public address (--allow-private-webhooks allows it)`);
    this.name = 'RefusedAddressError';
  }
}

/**
 * The agent deliveries connect through. The address check happens in its DNS lookup, so the
 * address checked is the address connected to: DNS rebinding cannot slip a private address in
 * between (the same approach as image_url fetches, server/net/fetch-image.ts). IP literals never
 * reach the lookup; parseWebhookUrl checks them before each attempt.
 */
export function deliveryAgent(policy: WebhookTargetPolicy): Agent {
  return new Agent({
    connect: {
      lookup: ((hostname, options, callback) => {
        const fail = (error: Error) => callback(error, '', 0);
        policy.lookup(hostname).then((found) => {
          if (found.length === 0) return fail(new Error(`${hostname} has no address`));
          const bad = policy.allowPrivate ? undefined : found.find((a) => !isPublicAddress(a.address));
          if (bad) return fail(new RefusedAddressError(hostname, bad.address));
          if (options.all === true) callback(null, found);
          else callback(null, found[0]?.address ?? '', found[0]?.family ?? 4);
        }, fail);
      }) satisfies LookupFunction,
    },
  });
}
