import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, startTestService } from './helpers.ts';
import type { TestService } from './helpers.ts';

// GET /usage's extension for clients that keep a ledger (docs/workflows.md): each key's last 4 characters
// and its charges per UTC day, which add up to the key's cost.
let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc.stop();
});

const still = (prompt: string) => ({ model: 'clipdesk/still', prompt, size: '256x256' });

describe('GET /usage per key and day', () => {
  it('reports each key’s last 4 characters and its charges per UTC day', async () => {
    const app = await svc.client('ledger-user');
    const other = await svc.service.createKey({ user: 'ledger-user', tier: 'pro', name: 'cli' });
    const cli = clientFor(svc.service.url, other.key);
    const first = await app.call('POST', '/images/generations', still('day one'));
    expect(first.status).toBe(200);
    svc.clock.advance(86_400_000);
    const second = await app.call('POST', '/images/generations', { ...still('day two'), n: 2 });
    const third = await cli.call('POST', '/images/generations', still('from the cli'));
    expect([second.status, third.status]).toEqual([200, 200]);

    type KeyCost = { keyId: string; cost: number; last4: string; days: Array<{ day: string; cost: number }> };
    const usage = (await app.call('GET', '/usage')).body.result.usage.cost as { byKey: KeyCost[] };
    const mine = usage.byKey.find((k) => k.keyId === app.keyId)!;
    const theirs = usage.byKey.find((k) => k.keyId === other.id)!;
    expect(mine.last4).toBe(app.key.slice(-4));
    expect(theirs.last4).toBe(other.key.slice(-4));
    expect(mine.days).toEqual([
      { day: '2026-01-01', cost: first.body.price, items: 1 },
      { day: '2026-01-02', cost: second.body.price, items: 2 },
    ]);
    expect(theirs.days).toEqual([{ day: '2026-01-02', cost: third.body.price, items: 1 }]);
    const sum = mine.days.reduce((n, d) => n + d.cost, 0);
    expect(sum).toBeCloseTo(mine.cost, 6);
  });
});
