import { describe, expect, it } from 'vitest';
import { isKeyError } from '../../../renderer/src/app/useAppEvents.ts';

describe('a refused key is recognised whatever layer reports it', () => {
  it('by code or by the spec’s exact messages', () => {
    expect(isKeyError({ code: 'authentication_error', message: 'x' })).toBe(true);
    expect(isKeyError({ code: 'permission_error', message: 'x' })).toBe(true);
    expect(isKeyError({ code: 'internal_error', message: 'Invalid API key' })).toBe(true);
    expect(isKeyError({ code: 'http_401', message: 'API key is missing' })).toBe(true);
    expect(isKeyError({ code: 'provider_unavailable', message: 'every provider failed' })).toBe(false);
  });
});
