import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../../../../server/providers/remote/contract.ts';
import { ProviderHealthTracker } from '../../../../../server/providers/remote/health.ts';
import { migratePostgres } from '../../../../../server/storage/pg/migrate.ts';
import { PostgresSql } from '../../../../../server/storage/sql/postgres.ts';
import { postgresUnavailable, startPostgres } from '../../../../support/postgres.ts';
import type { PrivatePostgres } from '../../../../support/postgres.ts';

// Memory only (SQLite's one node): the view changes at once, and the promises (the shared table's
// writes on PostgreSQL) have nothing to wait for.
describe('ProviderHealthTracker', () => {
  it('is ok until a failure, unhealthy since the first of a run, and ok again after a success', () => {
    let now = Date.UTC(2026, 0, 1);
    const health = new ProviderHealthTracker({ failuresBeforeCooldown: 3, cooldownMs: 60_000, now: () => now });
    expect(health.health('fal')).toEqual({ status: 'ok' });
    void health.failure('fal', new ProviderError('fal', 'server', 'fal answered HTTP 502'));
    now += 1000;
    void health.failure('fal', new ProviderError('fal', 'timeout', 'fal did not finish'));
    expect(health.health('fal')).toEqual({
      status: 'unhealthy',
      lastError: { class: 'timeout', message: 'fal did not finish', at: new Date(now).toISOString() },
      since: new Date(now - 1000).toISOString(),
    });
    expect(health.inCooldown('fal')).toBe(false);
    void health.success('fal');
    expect(health.health('fal')).toEqual({ status: 'ok' });
  });

  it('skips a provider for the cooldown after failures in a row, and at once after a refused key', () => {
    let now = 0;
    const health = new ProviderHealthTracker({ failuresBeforeCooldown: 3, cooldownMs: 60_000, now: () => now });
    for (let i = 0; i < 3; i++) void health.failure('replicate', new ProviderError('replicate', 'failed', 'failed'));
    expect(health.inCooldown('replicate')).toBe(true);
    expect(health.health('replicate').cooldownUntil).toBe(new Date(60_000).toISOString());
    now = 60_001;
    expect(health.inCooldown('replicate')).toBe(false);

    void health.failure('openai', new ProviderError('openai', 'auth', 'OpenAI refused its key'));
    expect(health.inCooldown('openai')).toBe(true);
    void health.reset('openai');
    expect(health.inCooldown('openai')).toBe(false);
  });

  it("does not count the request's own faults (content policy, invalid input) against the provider", () => {
    const health = new ProviderHealthTracker();
    void health.failure('luma', new ProviderError('luma', 'content_policy', 'refused'));
    void health.failure('luma', new ProviderError('luma', 'invalid_input', 'bad'));
    expect(health.health('luma')).toEqual({ status: 'ok' });
  });
});

/**
 * Two nodes' trackers on one PostgreSQL database (the team configuration): what one sees, the
 * other routes by once it has refreshed, and failures seen by both add up to the cooldown.
 */
const noPostgres = postgresUnavailable();
describe.skipIf(noPostgres !== null)('ProviderHealthTracker on PostgreSQL, shared by the nodes', () => {
  let cluster: PrivatePostgres;
  const open: PostgresSql[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(async () => {
    for (const db of open) await db.close();
    await cluster.stop();
  });
  async function twoNodes(name: string, now: () => number) {
    const url = await cluster.createDatabase(name);
    await migratePostgres(url);
    const logged: string[] = [];
    const node = () => {
      const db = new PostgresSql(url, 'a test database');
      open.push(db);
      return new ProviderHealthTracker({
        failuresBeforeCooldown: 3,
        cooldownMs: 60_000,
        now,
        db,
        log: (m) => logged.push(m),
        redact: (m) => m.split('sk-SECRET-1234').join('[redacted]'),
      });
    };
    return { a: node(), b: node(), db: open.at(-1)!, logged };
  }

  it("a refused key seen by one node puts the provider in a cooldown the other node's routing sees", async () => {
    const now = Date.UTC(2026, 0, 1);
    const { a, b, db, logged } = await twoNodes('health_refused', () => now);
    await a.failure('luma', new ProviderError('luma', 'auth', 'Luma refused the key sk-SECRET-1234'));
    expect(b.inCooldown('luma')).toBe(false);
    await b.refresh();
    expect(b.inCooldown('luma')).toBe(true);
    expect(b.health('luma')).toEqual({
      status: 'unhealthy',
      lastError: { class: 'auth', message: 'Luma refused the key [redacted]', at: new Date(now).toISOString() },
      since: new Date(now).toISOString(),
      cooldownUntil: new Date(now + 60_000).toISOString(),
    });
    // The key never reaches the table.
    expect(JSON.stringify(await db.all('SELECT * FROM provider_health'))).not.toContain('SECRET');
    // A new key on one node (or a success) clears it for both.
    await b.reset('luma');
    await a.refresh();
    expect([a.inCooldown('luma'), a.health('luma')]).toEqual([false, { status: 'ok' }]);
    expect(logged).toEqual([]);
  });

  it('failures counted by two nodes add up to the cooldown; a success on either clears the count', async () => {
    let now = Date.UTC(2026, 0, 1);
    const { a, b, logged } = await twoNodes('health_count', () => now);
    const failed = (m: string) => new ProviderError('fal', 'server', m);
    await a.failure('fal', failed('fal answered HTTP 502'));
    now += 1000;
    await b.failure('fal', failed('fal answered HTTP 503'));
    now += 1000;
    // Each node saw fewer than three; the table counts them all: this third starts the cooldown.
    await a.failure('fal', failed('fal answered HTTP 500'));
    await b.refresh();
    expect(b.inCooldown('fal')).toBe(true);
    expect(b.health('fal').since).toBe(new Date(now - 2000).toISOString());
    expect(b.health('fal').cooldownUntil).toBe(new Date(now + 60_000).toISOString());

    await b.success('fal');
    await a.failure('fal', failed('fal answered HTTP 502'));
    await b.refresh();
    expect([b.inCooldown('fal'), b.health('fal').status]).toEqual([false, 'unhealthy']);
    expect(logged).toEqual([]);
  });

  it('a database it cannot write is logged, never thrown, and the memory still routes', async () => {
    const { a, db, logged } = await twoNodes('health_unwritable', () => Date.now());
    await db.run('DROP TABLE provider_health');
    await a.failure('luma', new ProviderError('luma', 'auth', 'Luma refused its key'));
    await a.refresh();
    expect(a.inCooldown('luma')).toBe(true);
    expect(logged).toHaveLength(2);
    expect(logged[0]).toContain("could not record luma's failure in provider_health");
  });
});
