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

  it('a parent SIGKILLed the instant spawn() returned its ffmpeg leaves it running no longer than 2 s', async () => {
    const marker = `clipdesk-orphan-${randomUUID()}`;
    const parent = spawn(process.execPath, [PARENT, 'direct-at-spawn', marker], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    parent.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    parent.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const signal = await new Promise<NodeJS.Signals | null>((r) => parent.once('exit', (_code, s) => r(s)));
    // Its stdout has been read to the end once it closes: `spawned PID` came before the kill.
    await new Promise((r) => (parent.stdout.readableEnded ? r(undefined) : parent.stdout.once('end', r)));
    expect(signal, stderr).toBe('SIGKILL');
    const pid = Number(/spawned (\d+)/.exec(stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    // Registered by the run itself, so the reaper holds it whatever the parent had time to do.
    const gone = await waitUntil(() => !isRunning(pid) && liveFfmpegWith(marker).length === 0, 2_000);
    if (!gone) for (const p of [pid, ...liveFfmpegWith(marker)]) process.kill(p, 'SIGKILL');
    expect(gone).toBe(true);
  });
});
