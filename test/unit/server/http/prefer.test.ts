import { describe, expect, it } from 'vitest';
import { prefersAsync } from '../../../../server/http/prefer.ts';

describe('prefersAsync (RFC 7240 Prefer)', () => {
  it('finds respond-async among several preferences, in any case, in repeated headers', () => {
    expect(prefersAsync('respond-async')).toBe(true);
    expect(prefersAsync('wait=10, Respond-Async')).toBe(true);
    expect(prefersAsync(' return=minimal ;x=1 ,  respond-async ; foo=bar')).toBe(true);
    expect(prefersAsync(['return=minimal', 'respond-async'])).toBe(true);
  });

  it('ignores unknown tokens, and does not read a token out of a quoted value or a parameter', () => {
    expect(prefersAsync(undefined)).toBe(false);
    expect(prefersAsync('')).toBe(false);
    expect(prefersAsync('return=minimal, wait=5')).toBe(false);
    expect(prefersAsync('x-note="a, respond-async"')).toBe(false);
    expect(prefersAsync('handling=lenient; respond-async')).toBe(false);
    expect(prefersAsync('respond-asynchronously')).toBe(false);
  });
});
