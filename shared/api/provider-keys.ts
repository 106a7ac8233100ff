/**
 * The one rule for an AI provider's key (fal, Replicate, Google, Runway, Luma, OpenAI), checked by
 * the app before it stores a pasted key and by the service wherever a key comes in (its key file,
 * the environment, the embedding app). Printable ASCII without spaces: every provider's keys are,
 * and anything else is a paste of something else. 4,096 characters leaves room for the longest
 * tokens a provider issues (docs/providers.md).
 */
export const PROVIDER_KEY_MIN = 8;
export const PROVIDER_KEY_MAX = 4096;

/** What is wrong with a key; each side words it for its own reader. */
export type ProviderKeyFault = 'empty' | 'whitespace' | 'too_short' | 'too_long' | 'characters';

/** The first fault of `key` under the rule, or null when it can be a provider key. */
export function providerKeyFault(key: string): ProviderKeyFault | null {
  if (key.length === 0) return 'empty';
  if (/\s/.test(key)) return 'whitespace';
  if (key.length < PROVIDER_KEY_MIN) return 'too_short';
  if (key.length > PROVIDER_KEY_MAX) return 'too_long';
  if (!/^[\x21-\x7e]+$/.test(key)) return 'characters';
  return null;
}
