import { describe, expect, it } from 'vitest';
import { bindQuit } from '../../../../electron/main/platform/quit.ts';
import type { QuitApp } from '../../../../electron/main/platform/quit.ts';
import { onceShutdown } from '../../../../shared/node/shutdown.ts';
import type { SignalSource, StopSignal } from '../../../../shared/node/shutdown.ts';

/** Electron's app as far as quitting goes: quit() fires before-quit, and quits unless a listener prevents it. */
class FakeApp implements QuitApp {
  readonly listeners: ((event: { preventDefault(): void }) => void)[] = [];
  quitCalls = 0;
  quitted = false;
  exitCode: number | null = null;
  on(_event: 'before-quit', listener: (event: { preventDefault(): void }) => void): this {
    this.listeners.push(listener);
    return this;
  }
  quit(): void {
    this.quitCalls++;
    let prevented = false;
    for (const l of this.listeners) l({ preventDefault: () => (prevented = true) });
    if (!prevented) this.quitted = true;
  }
  exit(code: number): void {
    this.exitCode = code;
  }
}

class FakeSignals implements SignalSource {
  readonly listeners = new Map<StopSignal, (() => void)[]>();
  on(signal: StopSignal, listener: () => void): this {
    this.listeners.set(signal, [...(this.listeners.get(signal) ?? []), listener]);
    return this;
  }
  send(signal: StopSignal): void {
    for (const l of this.listeners.get(signal) ?? []) l();
  }
}

function deferred(): { promise: Promise<void>; resolve(): void; reject(e: Error): void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('the quit sequence', () => {
  it('holds the quit until the core is disposed, disposes once, then quits', async () => {
    const app = new FakeApp();
    const disposing = deferred();
    let disposeCalls = 0;
    bindQuit(
      app,
      onceShutdown(() => {
        disposeCalls++;
        return disposing.promise;
      }),
    );
    app.quit();
    expect(app.quitted).toBe(false);
    app.quit(); // the user insists (or the last window closed) while the core is stopping
    await tick();
    expect(app.quitted).toBe(false);
    expect(disposeCalls).toBe(1);
    disposing.resolve();
    await tick();
    expect(app.quitted).toBe(true);
    expect(disposeCalls).toBe(1);
  });

  it('still quits when dispose fails, and reports the failure', async () => {
    const app = new FakeApp();
    const errors: unknown[] = [];
    bindQuit(
      app,
      onceShutdown(() => Promise.reject(new Error('journal locked')), { onError: (e) => errors.push(e) }),
    );
    app.quit();
    await tick();
    expect(app.quitted).toBe(true);
    expect(String(errors[0])).toContain('journal locked');
  });

  it('still quits when dispose hangs, after its time limit', async () => {
    const app = new FakeApp();
    const errors: unknown[] = [];
    bindQuit(
      app,
      onceShutdown(() => new Promise(() => undefined), { timeoutMs: 20, onError: (e) => errors.push(e) }),
    );
    app.quit();
    await new Promise((r) => setTimeout(r, 60));
    expect(app.quitted).toBe(true);
    expect(String(errors[0])).toContain('did not finish');
  });

  it('SIGTERM and SIGINT quit through the same path; a second signal exits at once', async () => {
    const app = new FakeApp();
    const signals = new FakeSignals();
    const disposing = deferred();
    bindQuit(
      app,
      onceShutdown(() => disposing.promise),
      signals,
    );
    signals.send('SIGTERM');
    expect(app.quitCalls).toBe(1);
    expect(app.quitted).toBe(false);
    signals.send('SIGINT');
    expect(app.exitCode).toBe(130);
    disposing.resolve();
    await tick();
    expect(app.quitted).toBe(true);
  });
});
