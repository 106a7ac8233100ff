import { describe, expect, it } from 'vitest';
import { childEnv, toolEnv } from '../../../../shared/node/child-env.ts';
import { engineEnv } from '../../../../electron/core/engine/index.ts';
import {
  utilityEngineSpawner,
  type UtilityProcessApi,
} from '../../../../electron/main/platform/utility-engine-spawner.ts';

// A child's environment is a list of what it needs, never the parent's whole one (docs/security.md).
const PARENT: NodeJS.ProcessEnv = {
  PATH: '/usr/bin:/bin',
  HOME: '/home/u',
  LANG: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  CLIPDESK_KEY_PASSPHRASE: 'secret passphrase',
  CLIPDESK_API_KEY: 'cdsk_live_1234',
  FAL_KEY: 'fal-key-5678',
  ACME_SECRET_TOKEN: 'x',
  CLIPDESK_FFMPEG: '/opt/ffmpeg/bin/ffmpeg',
  HTTPS_PROXY: 'http://proxy.internal:3128',
};

describe('a child process’s environment', () => {
  it('for ffmpeg and its shells: the base (programs, home, temporary files, locale) and nothing else', () => {
    expect(toolEnv(PARENT)).toEqual({ PATH: '/usr/bin:/bin', HOME: '/home/u', LANG: 'C.UTF-8', LC_CTYPE: 'C.UTF-8' });
  });

  it('for the Local engine: the base, which ffmpeg to run and the proxy; no key, no passphrase', () => {
    const env = engineEnv(PARENT);
    expect(env).toMatchObject({ PATH: '/usr/bin:/bin', CLIPDESK_FFMPEG: '/opt/ffmpeg/bin/ffmpeg' });
    expect(env['HTTPS_PROXY']).toBe('http://proxy.internal:3128');
    for (const name of ['CLIPDESK_KEY_PASSPHRASE', 'CLIPDESK_API_KEY', 'FAL_KEY', 'ACME_SECRET_TOKEN'])
      expect(env).not.toHaveProperty(name);
  });

  it('names are matched as Windows does, whatever their case', () => {
    expect(childEnv(['Extra'], { Path: 'C:\\Windows', SystemRoot: 'C:\\Windows', EXTRA: '1', Other: '2' })).toEqual({
      Path: 'C:\\Windows',
      SystemRoot: 'C:\\Windows',
      EXTRA: '1',
    });
  });

  it('the packaged app’s engine (an Electron utility process) is given the engine’s environment', () => {
    const given: Array<NodeJS.ProcessEnv | undefined> = [];
    const api: UtilityProcessApi = {
      fork: (_path, _args, options) => {
        given.push(options?.env);
        return { pid: 1, postMessage: () => undefined, on: () => undefined, once: () => undefined, kill: () => true };
      },
    };
    const saved = process.env['CLIPDESK_KEY_PASSPHRASE'];
    process.env['CLIPDESK_KEY_PASSPHRASE'] = 'secret passphrase';
    try {
      utilityEngineSpawner(api)('/app/local-engine.mjs');
    } finally {
      if (saved === undefined) delete process.env['CLIPDESK_KEY_PASSPHRASE'];
      else process.env['CLIPDESK_KEY_PASSPHRASE'] = saved;
    }
    expect(given[0]).toBeDefined();
    expect(given[0]).not.toHaveProperty('CLIPDESK_KEY_PASSPHRASE');
    expect(given[0]?.['PATH']).toBe(process.env['PATH']);
  });
});
