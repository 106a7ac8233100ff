import type { RemoteProviderId } from './contract.ts';
import type { InputSchemaEntry } from './input-schemas.ts';
import { InputSchemaRefusal, shippedInputSchema } from './input-schemas.ts';

/**
 * The end frame's field in a provider's body (docs/providers.md, "End frames"). The schema
 * checker lets unknown fields pass (the providers ignore them), so an end frame sent to an
 * endpoint without the field would be dropped without a word: refused here instead, before
 * anything is sent or paid, and routing may try another provider.
 */
export function endImageField(
  provider: RemoteProviderId,
  path: string,
  field: string,
  url: string,
  entry: Pick<InputSchemaEntry, 'schema'> | undefined = shippedInputSchema(provider, path),
): Record<string, string> {
  const properties = (entry?.schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!properties || !Object.hasOwn(properties, field))
    throw new InputSchemaRefusal(provider, `${provider} (${path}) takes no end frame (no ${field} in its input)`);
  return { [field]: url };
}
