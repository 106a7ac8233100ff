import { describe, expect, it } from 'vitest';
import { WebhookHub } from '../../../../../server/providers/remote/webhooks.ts';
import type { Wake } from '../../../../../server/providers/remote/webhooks.ts';

const never = new AbortController().signal;
const ID = '024ca5b1-45d3-4afd-883e-ad3abe2a1c4d';

/** The wake a sleep of `ms` ends with. */
function nap(hub: WebhookHub, id: string, ms: number): Promise<Wake> {
  return hub.sleep('fal', id, ms, never);
}

describe('WebhookHub: what deliveries can make it hold and do', () => {
  it('keeps nothing for a job it does not watch while no submit is in flight', async () => {
    const hub = new WebhookHub();
    for (let i = 0; i < 1_000; i++) expect(hub.deliver('fal', `${i}-${'j'.repeat(100)}`)).toBe(false);
    expect(hub.earlySize).toBe(0);
    // A job watched later was not woken by a delivery from before.
    const unwatch = hub.watch('fal', '0-' + 'j'.repeat(100));
    expect(await nap(hub, '0-' + 'j'.repeat(100), 5)).toEqual({ woken: false });
    unwatch();
  });

  it('while a submit is in flight, keeps unknown ids in a buffer bounded in entries and bytes', async () => {
    const hub = new WebhookHub({ earlyEntries: 50, earlyBytes: 4_096 });
    const done = hub.submitStarted('fal');
    hub.deliver('fal', ID);
    for (let i = 0; i < 10_000; i++) hub.deliver('fal', `forged-${i}`);
    expect(hub.earlySize).toBeLessThanOrEqual(50);
    for (let i = 0; i < 100; i++) hub.deliver('fal', `${i}${'j'.repeat(2_000)}`);
    expect(hub.earlySize).toBeLessThanOrEqual(1);
    done();
    // The newest delivery before the submit answered is still there for its job.
    const last = `99${'j'.repeat(2_000)}`;
    const unwatch = hub.watch('fal', last);
    expect(await nap(hub, last, 10_000)).toEqual({ woken: true });
    unwatch();
  });

  it('a delivery that beats the submit’s answer wakes the job once it is watched', async () => {
    const hub = new WebhookHub();
    const done = hub.submitStarted('fal');
    expect(hub.deliver('fal', ID)).toBe(false);
    done();
    const unwatch = hub.watch('fal', ID);
    expect(await nap(hub, ID, 10_000)).toEqual({ woken: true });
    unwatch();
    // Another provider's job of the same id is another job.
    const other = hub.watch('replicate', ID);
    expect((await hub.sleep('replicate', ID, 1, never)).woken).toBe(false);
    other();
  });

  it('hints wake a job at most once per interval, folded into one wake-up at its end', async () => {
    const hub = new WebhookHub({ hintIntervalMs: 150 });
    const unwatch = hub.watch('fal', ID);
    const first = nap(hub, ID, 10_000);
    expect(hub.deliver('fal', ID)).toBe(true);
    expect(await first).toEqual({ woken: true });
    // A flood right after: none wakes the job before the interval ends, then one does.
    const started = Date.now();
    const second = nap(hub, ID, 10_000);
    for (let i = 0; i < 1_000; i++) hub.deliver('fal', ID);
    expect(await second).toEqual({ woken: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    // Nothing else is left pending by the flood.
    expect(await nap(hub, ID, 200)).toEqual({ woken: false });
    unwatch();
  });

  it('a verified status is applied at once, whatever the hint interval', async () => {
    const hub = new WebhookHub({ hintIntervalMs: 60_000 });
    const unwatch = hub.watch('fal', ID);
    hub.deliver('fal', ID);
    await nap(hub, ID, 10);
    const waiting = nap(hub, ID, 10_000);
    hub.deliver('fal', ID, { status: 'running', progress: 0.5 });
    expect(await waiting).toEqual({ woken: true, status: { status: 'running', progress: 0.5 } });
    unwatch();
    // Unwatched, the job is forgotten: later deliveries keep nothing.
    expect(hub.deliver('fal', ID)).toBe(false);
    expect(hub.earlySize).toBe(0);
  });
});
