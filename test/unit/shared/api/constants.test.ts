import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from '../../../../shared/api/index.ts';
import * as constants from '../../../../shared/api/constants.ts';

describe('shared/api/constants', () => {
  it('imports nothing, so the renderer can read it without loading zod at startup', () => {
    const source = readFileSync(new URL('../../../../shared/api/constants.ts', import.meta.url), 'utf8');
    expect(source).not.toMatch(/^\s*import\b/m);
  });
  it('is what shared/api exports: one source for the service, the client and the UI', () => {
    expect(api.CONTENT_LIMITS).toBe(constants.CONTENT_LIMITS);
    expect(api.RATE_WINDOWS).toBe(constants.RATE_WINDOWS);
    expect(api.ROUTING_MODES).toBe(constants.ROUTING_MODES);
    expect(api.ROUTING_EXPLANATIONS).toBe(constants.ROUTING_EXPLANATIONS);
    expect(api.RoutingMode.options).toEqual([...constants.ROUTING_MODES]);
  });
});
