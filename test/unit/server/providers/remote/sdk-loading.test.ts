import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ADAPTERS_URL = new URL('../../../../../server/providers/remote/adapters.ts', import.meta.url).href;
const SDKS = [
  '@fal-ai/client',
  '@google/genai',
  'google-auth-library',
  'lumaai',
  'openai',
  'replicate',
  '@runwayml/sdk',
];

/**
 * A fresh process (this project shares one between files, and other files load the SDKs) that
 * records every package it loads: after importing the adapters, and after one adapter call.
 */
const CHILD = `
import { registerHooks } from 'node:module';
const loaded = new Set();
registerHooks({
  load(url, context, next) {
    const match = /node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(url);
    if (match) loaded.add(match[1]);
    return next(url, context);
  },
});
const { ADAPTERS } = await import(${JSON.stringify(ADAPTERS_URL)});
const atStart = [...loaded];
// Port 9 on loopback refuses at once: the call fails, but only after loading its SDK.
await ADAPTERS.openai.testKey({ apiKey: 'sk-test', baseUrl: 'http://127.0.0.1:9/v1' }, AbortSignal.timeout(5000))
  .catch(() => undefined);
process.stdout.write(JSON.stringify({ atStart, afterUse: [...loaded] }));
`;

describe('provider SDKs', () => {
  it('are loaded on a provider’s first use, not when the adapters are imported', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    const { atStart, afterUse } = JSON.parse(stdout) as { atStart: string[]; afterUse: string[] };
    expect(atStart.filter((name) => SDKS.includes(name))).toEqual([]);
    expect(afterUse.filter((name) => SDKS.includes(name))).toEqual(['openai']);
  });
});
