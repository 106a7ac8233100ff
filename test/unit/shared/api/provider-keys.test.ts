import { describe, expect, it } from 'vitest';
import { PROVIDER_KEY_MAX, PROVIDER_KEY_MIN } from '../../../../shared/api/provider-keys.ts';
import { providerKeyProblem } from '../../../../shared/ipc/schemas/providers.ts';
import { ProviderSettingsError, validateProviderKey } from '../../../../server/providers/provider-keys.ts';

/** Whether the service takes the key (its key file, environment and the embedding app all check it so). */
function serviceTakes(key: string): boolean {
  try {
    validateProviderKey('fal', key);
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderSettingsError);
    // The reason names the provider, never the key.
    expect((error as Error).message).toMatch(/for fal/);
    if (key.length >= 4) expect((error as Error).message).not.toContain(key);
    return false;
  }
}

describe('one provider-key rule for the app and the service', () => {
  const cases: Array<[string, string]> = [
    ['shortest', 'k'.repeat(PROVIDER_KEY_MIN)],
    ['too short', 'k'.repeat(PROVIDER_KEY_MIN - 1)],
    ['longest', 'k'.repeat(PROVIDER_KEY_MAX)],
    ['too long', 'k'.repeat(PROVIDER_KEY_MAX + 1)],
    ['between the old limits (1,025 to 4,096)', 'k'.repeat(2048)],
    ['a space inside', 'fal-key 0001-abcd'],
    ['a line break', 'fal-key-0001-abcd\n'],
    ['a control character', 'fal-key-\u00070001'],
    ['not ASCII', 'fal-kéy-0001-abcd'],
    ['empty', ''],
    ['an ordinary key', 'r8_0123456789abcdefABCDEF:/+=-_.'],
  ];
  it.each(cases)('%s: the app and the service agree', (_name, key) => {
    expect(serviceTakes(key)).toBe(providerKeyProblem(key) === null);
  });

  it('accepts 8 to 4,096 printable ASCII characters', () => {
    expect(providerKeyProblem('k'.repeat(4096))).toBeNull();
    expect(providerKeyProblem('k'.repeat(7))).toMatch(/too short/);
    expect(providerKeyProblem('k'.repeat(4097))).toMatch(/too long/);
  });
});
