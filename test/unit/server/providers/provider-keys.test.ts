import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  keyFilePath,
  ProviderSettings,
  ProviderSettingsError,
  readKeyFile,
  storeKey,
  validateBaseUrl,
} from '../../../../server/providers/provider-keys.ts';

const FAL = 'fal-file-key-0001';
const FAL_ENV = 'fal-env-key-0002';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'clipdesk-keys-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the key file', () => {
  it('is written owner-only and atomically, and read back', async () => {
    expect(await storeKey(dir, 'fal', FAL)).toBe(false);
    expect(await storeKey(dir, 'replicate', 'r8_replicate-key-0003')).toBe(false);
    const mode = (await stat(keyFilePath(dir))).mode & 0o777;
    if (process.platform !== 'win32') expect(mode).toBe(0o600);
    expect(await readKeyFile(dir)).toEqual({ fal: FAL, replicate: 'r8_replicate-key-0003' });
    // No temporary file is left beside it.
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect(await storeKey(dir, 'fal', null)).toBe(true);
    expect(await readKeyFile(dir)).toEqual({ replicate: 'r8_replicate-key-0003' });
  });

  it('refuses a key with whitespace or a newline, without echoing it', async () => {
    for (const bad of ['fal key 0001', 'fal-key-0001\n', 'fal-key\r\n0001', '\tfal-key-0001', '']) {
      const error = await storeKey(dir, 'fal', bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderSettingsError);
      expect((error as Error).message).toMatch(/fal/);
      if (bad.trim() !== '') expect((error as Error).message).not.toContain(bad.trim());
    }
    await expect(readFile(keyFilePath(dir))).rejects.toThrow(/ENOENT/);
  });

  it('a damaged file is an error naming the file, never its content', async () => {
    await writeFile(keyFilePath(dir), '{"keys": {"fal": "secret-in-broken-file"');
    const error = await readKeyFile(dir).catch((e: unknown) => e as Error);
    expect(error).toBeInstanceOf(ProviderSettingsError);
    expect((error as Error).message).toContain(keyFilePath(dir));
    expect((error as Error).message).not.toContain('secret-in-broken-file');
  });
});

describe('ProviderSettings', () => {
  it('the app’s key beats the key file, which beats the environment', () => {
    const env = { FAL_KEY: FAL_ENV, REPLICATE_API_TOKEN: 'r8_env-token-0004' };
    const settings = new ProviderSettings({ env, fileKeys: { fal: FAL } });
    expect(settings.key('fal')).toEqual({ key: FAL, source: 'file' });
    expect(settings.key('replicate')).toEqual({ key: 'r8_env-token-0004', source: 'env' });
    expect(settings.key('google')).toBeUndefined();
    settings.setAppKey('fal', 'fal-app-key-0005');
    expect(settings.key('fal')).toEqual({ key: 'fal-app-key-0005', source: 'app' });
    settings.setAppKey('fal', null);
    expect(settings.key('fal')?.source).toBe('file');
    settings.setFileKeys({});
    expect(settings.key('fal')).toEqual({ key: FAL_ENV, source: 'env' });
  });

  it('reads every SDK’s usual variable', () => {
    const settings = new ProviderSettings({
      env: {
        FAL_KEY: 'k-fal-00001',
        REPLICATE_API_TOKEN: 'k-rep-00001',
        GEMINI_API_KEY: 'k-gem-00001',
        RUNWAYML_API_SECRET: 'k-run-00001',
        LUMAAI_API_KEY: 'k-lum-00001',
        OPENAI_API_KEY: 'k-oai-00001',
      },
    });
    for (const id of ['fal', 'replicate', 'google', 'runway', 'luma', 'openai'] as const)
      expect(settings.key(id)?.source, id).toBe('env');
  });

  it('a key with whitespace in the environment stops the start, naming the variable only', () => {
    expect(() => new ProviderSettings({ env: { FAL_KEY: `${FAL_ENV}\n` } })).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/FAL_KEY for fal contains whitespace or a line break/),
      }),
    );
    expect(() => new ProviderSettings({ env: { FAL_KEY: `${FAL_ENV}\n` } })).not.toThrow(new RegExp(FAL_ENV));
    expect(() => new ProviderSettings({ env: {}, appKeys: { fal: 'a b' } })).toThrow(ProviderSettingsError);
  });

  it('base URLs: the environment’s CLIPDESK_<ID>_BASE_URL, the app’s over it, http(s) only', () => {
    const settings = new ProviderSettings({ env: { CLIPDESK_REPLICATE_BASE_URL: 'http://127.0.0.1:9000/' } });
    expect(settings.baseUrl('replicate')).toBe('http://127.0.0.1:9000');
    settings.setBaseUrl('replicate', 'https://proxy.example/replicate');
    expect(settings.baseUrl('replicate')).toBe('https://proxy.example/replicate');
    settings.setBaseUrl('replicate', null);
    expect(settings.baseUrl('replicate')).toBe('http://127.0.0.1:9000');
    expect(() => new ProviderSettings({ env: { CLIPDESK_REPLICATE_BASE_URL: 'ftp://files.example' } })).toThrow(
      /CLIPDESK_REPLICATE_BASE_URL for replicate must be an http or https URL, not ftp/,
    );
    expect(() => new ProviderSettings({ env: { CLIPDESK_FAL_BASE_URL: 'not a url' } })).toThrow(/is not a URL/);
    expect(() => validateBaseUrl('fal', 'https://user:pw@proxy.example')).toThrow(/credentials/);
    expect(() => settings.setBaseUrl('fal', 'file:///etc/passwd')).toThrow(/http or https/);
  });

  it('switches providers off and on, and refuses unknown ids', () => {
    const settings = new ProviderSettings({ env: { FAL_KEY: FAL_ENV }, disabled: ['fal'] });
    expect(settings.enabled('fal')).toBe(false);
    expect(settings.adapterSettings('fal')).toEqual({ apiKey: FAL_ENV });
    settings.setEnabled('fal', true);
    expect(settings.enabled('fal')).toBe(true);
    expect(() => settings.setEnabled('local-swift', false)).toThrow(/unknown provider/);
  });
});
