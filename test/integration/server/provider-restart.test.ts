import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startFalFake } from '../../fakes/providers/fal.ts';
import { exited, serveProcess } from '../../support/service-process.ts';
import { clientFor, processEnv } from './helpers.ts';

const BIN = fileURLToPath(new URL('../../../bin/clipdesk-service.js', import.meta.url));

async function cli(args: string[], dataDir: string): Promise<string> {
  const env = await processEnv(dataDir);
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], { env });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', fail);
    child.on('close', () => done(stdout));
  });
}

/**
 * The standalone service in front of fal's contract fake, its key and base URL from the
 * environment as an operator's would be, killed with SIGKILL right after fal accepted the job:
 * restarted, it finishes that job (no second submission) and the client's repeat gets the result.
 */
describe('a standalone service killed while fal works on its job', () => {
  it('resumes the fal job after a restart: one submission, one item, the repeat answered from it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-provider-restart-'));
    const fal = await startFalFake({ pollsBeforeDone: 0 });
    const env: NodeJS.ProcessEnv = {
      ...(await processEnv(dataDir)),
      FAL_KEY: fal.key,
      CLIPDESK_FAL_BASE_URL: fal.baseUrl,
    };
    for (const name of [
      'REPLICATE_API_TOKEN',
      'GEMINI_API_KEY',
      'RUNWAYML_API_SECRET',
      'LUMAAI_API_KEY',
      'OPENAI_API_KEY',
    ])
      delete env[name];
    const request = { model: 'kling/v2.1', prompt: 'a lantern drifting downriver', provider: 'fal', duration: 5 };
    const headers = { 'Idempotency-Key': 'restart-fal-0001' };
    try {
      const key = (await cli(['keys', 'create', '--user', 'ines', '--tier', 'pro', '--data', dataDir], dataDir)).split(
        '\n',
      )[0]!;
      const crashing = await serveProcess(dataDir, { env: { ...env, CLIPDESK_TEST_CRASH_AT: 'submitted' } });
      // The answer never comes: the process dies once fal has the job and its id is saved.
      const lost = await clientFor(crashing.url, key)
        .call('POST', '/videos/generations', request, headers)
        .then(
          () => 'answered',
          () => 'cut off',
        );
      expect(lost).toBe('cut off');
      expect(await exited(crashing.child)).toBe('SIGKILL');
      expect(fal.submissions()).toBe(1);

      const again = await serveProcess(dataDir, { env });
      try {
        const c = clientFor(again.url, key);
        const repeat = await c.call('POST', '/videos/generations', request, headers);
        expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
        expect(repeat.body.stats.providerId).toBe('fal');
        expect(fal.submissions()).toBe(1);
        const listed = await c.call('GET', '/media?user=me');
        expect(listed.body.result.total).toBe(1);
        expect(listed.body.result.medias[0].id).toBe(repeat.body.data[0].id);
      } finally {
        again.child.kill('SIGTERM');
        await exited(again.child);
      }
    } finally {
      await fal.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
