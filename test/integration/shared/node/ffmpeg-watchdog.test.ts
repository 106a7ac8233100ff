import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRunning, liveFfmpegWith, waitUntil } from '../../../support/processes.ts';

const PARENT = join(import.meta.dirname, 'orphan-parent.ts');

describe.skipIf(process.platform === 'win32')('ffmpeg dies with its parent', () => {
  for (const mode of ['direct', 'fluent']) {
    it(`a SIGKILLed parent leaves no ${mode} ffmpeg running`, async () => {
      const marker = `clipdesk-orphan-${randomUUID()}`;
      const parent = spawn(process.execPath, [PARENT, mode, marker], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      parent.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const exited = new Promise<void>((r) => parent.once('exit', () => r()));
      const reaper = await new Promise<string>((resolve, reject) => {
        parent.stdout.on('data', (d: Buffer) => {
          const said = /running reaper=(\S+)/.exec(d.toString());
          if (said) resolve(said[1]!);
        });
        parent.once('exit', (code) => reject(new Error(`parent exited ${code}: ${stderr}`)));
      });
      let pids: number[] = [];
      expect(await waitUntil(() => (pids = liveFfmpegWith(marker)).length === 1, 10_000)).toBe(true);
      const [pid] = pids as [number];
      // A direct run's reaper is started before its first ffmpeg (pids increase): started after
      // it, its fork left a window in which a SIGKILLed parent orphaned that ffmpeg.
      if (mode === 'direct') expect(Number(reaper)).toBeLessThan(pid);

      parent.kill('SIGKILL');
      await exited;
      // The endless render would run forever without the watchdog; the cap is only a bound.
      const gone = await waitUntil(() => !isRunning(pid), 10_000);
      if (!gone) process.kill(pid, 'SIGKILL');
      expect(gone).toBe(true);
    });
  }
});
