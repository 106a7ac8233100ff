import { describe, expect, it } from 'vitest';
import { exitOnSignals, onceShutdown } from '../../../../shared/node/shutdown.ts';
import type { StopSignal } from '../../../../shared/node/shutdown.ts';

describe('exitOnSignals', () => {
  it('stops once and exits 0 after the stop settled; a second signal exits at once', async () => {
    const listeners = new Map<StopSignal, () => void>();
    const exits: number[] = [];
    let release!: () => void;
    let stops = 0;
    const stop = onceShutdown(() => {
      stops++;
      return new Promise<void>((r) => (release = r));
    });
    exitOnSignals({ on: (s, l) => listeners.set(s, l) }, stop, (code) => exits.push(code));
    listeners.get('SIGTERM')!();
    await new Promise((r) => setTimeout(r, 0));
    expect(exits).toEqual([]);
    listeners.get('SIGTERM')!();
    expect(exits).toEqual([143]);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(exits).toEqual([143, 0]);
    expect(stops).toBe(1);
  });
});
