import { describe, expect, it } from 'vitest';
import { providerBaseUrlProblem } from '../../../../shared/ipc/provider-rules.ts';

// The base-URL rule the Providers form checks as the creator types and main enforces (zod-free,
// so the renderer's first screen does not load the schema library: docs/architecture.md).
describe('providerBaseUrlProblem', () => {
  it.each([
    'https://proxy.example',
    'http://127.0.0.1:8787/v1',
    '  https://proxy.example/fal  ',
    'HTTPS://Proxy.Example',
  ])('takes %j', (url) => expect(providerBaseUrlProblem(url)).toBeNull());

  it.each([
    ['fal.example', /^Not a URL/],
    ['https://proxy.exa\tmple', /^Not a URL/],
    ['https://proxy.example/\nfal', /^Not a URL/],
    ['https:proxy.example', /http:\/\/ or https:\/\//],
    ['https:/proxy.example', /http:\/\/ or https:\/\//],
    ['ftp://files.example', /http:\/\/ or https:\/\//],
    ['https://user:pass@proxy.example', /user name or password/],
    ['https://proxy.example/#top', /query/],
  ])('refuses %j', (url, message) => expect(providerBaseUrlProblem(url)).toMatch(message));
});
