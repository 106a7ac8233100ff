import { afterEach, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { Generation, WebhookDeliveryListResponse, WebhookEvent } from '../../../shared/api/index.ts';
import { silentLogger } from '../../../server/logger.ts';
import type { Logger } from '../../../server/logger.ts';
import type { SqliteSql } from '../../../server/storage/sql/sqlite.ts';
import { openDatabase } from '../../../server/storage/db.ts';
import { loadOrCreateSecret } from '../../../server/storage/secret.ts';
import { recordDelivery } from '../../../server/webhooks/deliveries.ts';
import type { DeliveryRow } from '../../../server/webhooks/deliveries.ts';
import type { WebhookTimings } from '../../../server/webhooks/dispatcher.ts';
import { WebhookDispatcher } from '../../../server/webhooks/dispatcher.ts';
import { WebhookSecrets, createKeyWithWebhookSecret } from '../../../server/webhooks/secrets.ts';
import type { HostLookup } from '../../../server/net/host-lookup.ts';
import { startLoopback } from '../../fakes/providers/loopback.ts';
import type { FakeRequest } from '../../fakes/providers/loopback.ts';
import { clientFor, openTestDatabase, startTestService } from './helpers.ts';

/** A final generation as the async engineer's code hands it over (built from the zod shape). */
function finished(id: string, status: 'succeeded' | 'failed' | 'canceled' = 'succeeded'): Generation {
  return Generation.parse({
    id,
    object: 'generation',
    operation: 'videos.generations',
    status,
    createdAt: '2026-01-01T12:00:00.000Z',
    updatedAt: '2026-01-01T12:00:05.000Z',
    ...(status === 'succeeded' ? { price: 0.5, data: [] } : {}),
    ...(status === 'failed' ? { error: { type: 'provider_unavailable', message: 'every provider failed' } } : {}),
    webhookUrl: 'http://example.invalid/hook',
  });
}

/** Waits for `check` to hold, polling briefly (never a fixed sleep). */
async function until<T>(check: () => T | undefined | null | false, what: string, limitMs = 15_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = check();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

type Receiver = Awaited<ReturnType<typeof startLoopback>>;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function receiver(handle: (req: FakeRequest, res: ServerResponse) => void): Promise<Receiver> {
  const r = await startLoopback(handle);
  cleanups.push(() => r.close());
  return r;
}

const ok = (_req: FakeRequest, res: ServerResponse) => res.writeHead(204).end();

/** A data directory with a key (and its secret), and a dispatcher over it: no HTTP service needed. */
async function dispatcherFixture(
  o: {
    timings?: WebhookTimings;
    allowPrivate?: boolean;
    lookup?: HostLookup;
    logger?: Logger;
  } = {},
) {
  const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-hooks-'));
  const db = openDatabase(dataDir);
  const secrets = new WebhookSecrets(db, await loadOrCreateSecret(dataDir));
  const key = await createKeyWithWebhookSecret(db, secrets, Date.now(), { user: 'hana', tier: 'pro' });
  const dispatcher = new WebhookDispatcher({
    db,
    secrets,
    policy: { allowPrivate: o.allowPrivate ?? true, lookup: o.lookup ?? (() => Promise.resolve([])) },
    logger: o.logger ?? silentLogger,
    timings: { initialBackoffMs: 10, attemptTimeoutMs: 5_000, ...o.timings },
  });
  dispatcher.start();
  cleanups.push(async () => {
    await dispatcher.stop();
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  });
  return { dataDir, db, key, dispatcher };
}

function row(db: SqliteSql, id?: string): DeliveryRow | undefined {
  return (
    id === undefined
      ? db.raw.prepare('SELECT * FROM webhook_deliveries ORDER BY created_at DESC LIMIT 1').get()
      : db.raw.prepare('SELECT * FROM webhook_deliveries WHERE id = ?').get(id)
  ) as DeliveryRow | undefined;
}

describe('webhook delivery', () => {
  it('POSTs the final generation, signed the Standard Webhooks way (verified with the reference library)', async () => {
    const r = await receiver(ok);
    const { db, key, dispatcher } = await dispatcherFixture();
    await dispatcher.generationFinished(finished('gen_ok1'), { url: `${r.baseUrl}/hooks/clipdesk?x=1`, keyId: key.id });
    const delivered = await until(() => row(db)?.state === 'delivered' && row(db), 'the delivery');
    expect(delivered).toMatchObject({ attempts: 1, last_status: 204, last_error: null, next_attempt_at: null });

    expect(r.requests).toHaveLength(1);
    const req = r.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hooks/clipdesk?x=1');
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['webhook-id']).toBe(delivered.id);
    expect(req.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const raw = JSON.stringify(req.body);
    expect(key.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const event = WebhookEvent.parse(new Webhook(key.webhookSecret).verify(delivered.payload, req.headers));
    expect(event.type).toBe('generation.succeeded');
    expect(event.data).toEqual(finished('gen_ok1'));
    expect(raw).toBe(delivered.payload);
    // Another secret does not verify it.
    const other = await createKeyWithWebhookSecret(db, new WebhookSecrets(db, Buffer.alloc(32, 7)), Date.now(), {
      user: 'hana',
    });
    expect(() => new Webhook(other.webhookSecret).verify(delivered.payload, req.headers)).toThrow();
  });

  it('failed and canceled generations have their own types; a generation that is not final sends nothing', async () => {
    const r = await receiver(ok);
    const { db, key, dispatcher } = await dispatcherFixture();
    await dispatcher.generationFinished(finished('gen_f', 'failed'), { url: r.baseUrl, keyId: key.id });
    await dispatcher.generationFinished(finished('gen_c', 'canceled'), { url: r.baseUrl, keyId: key.id });
    await dispatcher.generationFinished({ ...finished('gen_q'), status: 'queued' }, { url: r.baseUrl, keyId: key.id });
    await dispatcher.generationFinished(finished('gen_none'), undefined);
    await until(() => r.requests.length === 2, 'two deliveries');
    const types = r.requests.map((q) => WebhookEvent.parse(q.body)).map((e) => `${e.data.id}:${e.type}`);
    expect(types.sort()).toEqual(['gen_c:generation.canceled', 'gen_f:generation.failed']);
    expect(db.raw.prepare('SELECT count(*) AS n FROM webhook_deliveries').get()).toEqual({ n: 2 });
  });

  it('retries a receiver that fails twice with the same webhook-id, then is delivered', async () => {
    let calls = 0;
    const r = await receiver((_req, res) => {
      calls++;
      if (calls === 1) res.writeHead(500).end('boom');
      else if (calls === 2) res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end();
      else res.writeHead(200).end();
    });
    const { db, key, dispatcher } = await dispatcherFixture();
    await dispatcher.generationFinished(finished('gen_retry'), { url: r.baseUrl, keyId: key.id });
    const delivered = await until(() => row(db)?.state === 'delivered' && row(db), 'the third attempt');
    expect(delivered.attempts).toBe(3);
    expect(r.requests).toHaveLength(3);
    const ids = new Set(r.requests.map((q) => q.headers['webhook-id']));
    expect([...ids]).toEqual([delivered.id]);
    // Each attempt is signed anew, and each verifies.
    for (const q of r.requests)
      expect(() => new Webhook(key.webhookSecret).verify(delivered.payload, q.headers)).not.toThrow();
  });

  it('records each failed attempt: status, error, next attempt; fails after the maximum age', async () => {
    const r = await receiver((_req, res) => res.writeHead(503).end());
    const { db, key, dispatcher } = await dispatcherFixture({ timings: { initialBackoffMs: 20, maxAgeMs: 150 } });
    await dispatcher.generationFinished(finished('gen_503'), { url: r.baseUrl, keyId: key.id });
    const first = await until(() => (row(db)?.attempts ?? 0) >= 1 && row(db), 'the first attempt');
    expect(first).toMatchObject({ last_status: 503, last_error: 'HTTP 503' });
    const failed = await until(() => row(db)?.state === 'failed' && row(db), 'giving up');
    expect(failed.next_attempt_at).toBeNull();
    expect(failed.attempts).toBeGreaterThan(1);
    expect(r.requests.length).toBe(failed.attempts);
  });

  it('a hanging receiver times out and does not hold back another delivery', async () => {
    const hanging: ServerResponse[] = [];
    const slow = await receiver((_req, res) => void hanging.push(res));
    const fast = await receiver(ok);
    const { db, key, dispatcher } = await dispatcherFixture({
      timings: { attemptTimeoutMs: 1_000, initialBackoffMs: 60_000 },
    });
    await dispatcher.generationFinished(finished('gen_hang'), { url: slow.baseUrl, keyId: key.id });
    await until(() => hanging.length === 1, 'the hanging receiver to get its request');
    const hangId = slow.requests[0]!.headers['webhook-id']!;
    await dispatcher.generationFinished(finished('gen_fast'), { url: fast.baseUrl, keyId: key.id });
    await until(() => fast.requests.length === 1, 'the other delivery');
    const fastRow = await until(() => row(db, fast.requests[0]!.headers['webhook-id'])?.state === 'delivered', 'fast');
    expect(fastRow).toBe(true);
    // The hanging attempt is still open: the other delivery did not wait for it.
    expect(row(db, hangId)?.attempts).toBe(0);
    const timedOut = await until(() => (row(db, hangId)?.attempts ?? 0) === 1 && row(db, hangId), 'the timeout');
    expect(timedOut).toMatchObject({ state: 'pending', last_status: null, last_error: 'timed out after 1 s' });
  });

  it('refuses private targets at delivery without the flag (a literal, or a name resolving to one)', async () => {
    const r = await receiver(ok);
    const lookup: HostLookup = (host) =>
      Promise.resolve(host === 'hooks.example.com' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const { db, key, dispatcher } = await dispatcherFixture({ allowPrivate: false, lookup });
    const port = new URL(r.baseUrl).port;
    await dispatcher.generationFinished(finished('gen_lit'), { url: r.baseUrl, keyId: key.id });
    await dispatcher.generationFinished(finished('gen_dns'), {
      url: `http://hooks.example.com:${port}/`,
      keyId: key.id,
    });
    const rows = await until(() => {
      const all = db.raw
        .prepare(`SELECT * FROM webhook_deliveries WHERE state = 'failed'`)
        .all() as unknown as DeliveryRow[];
      return all.length === 2 && all;
    }, 'both refused');
    // Refused for good at once (the address will not become public by retrying).
    for (const x of rows) expect(x.attempts).toBe(1);
    const errors = rows.map((x) => `${x.generation_id}: ${x.last_error}`).sort();
    expect(errors[0]).toMatch(/^gen_dns: hooks\.example\.com resolves to 127\.0\.0\.1, which is not a public address/);
    expect(errors[1]).toMatch(/^gen_lit: webhook_url must be a public address \(127\.0\.0\.1 is not\)/);
    expect(r.requests).toHaveLength(0);
  });

  it('with private targets allowed, a host name resolving to loopback is delivered to', async () => {
    const r = await receiver(ok);
    const lookup: HostLookup = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    const { db, key, dispatcher } = await dispatcherFixture({ allowPrivate: true, lookup });
    await dispatcher.generationFinished(finished('gen_name'), {
      url: `http://hooks.example.com:${new URL(r.baseUrl).port}/in`,
      keyId: key.id,
    });
    await until(() => row(db)?.state === 'delivered', 'the delivery');
    expect(r.requests[0]?.headers['host']).toBe(`hooks.example.com:${new URL(r.baseUrl).port}`);
  });

  it('a key made before webhooks existed gets a secret on first use', async () => {
    const r = await receiver(ok);
    const { db, key, dispatcher } = await dispatcherFixture();
    db.raw.prepare('UPDATE api_keys SET webhook_secret = NULL WHERE id = ?').run(key.id);
    await dispatcher.generationFinished(finished('gen_old'), { url: r.baseUrl, keyId: key.id });
    await until(() => row(db)?.state === 'delivered', 'the delivery');
    expect(r.requests[0]?.headers['webhook-signature']).toMatch(/^v1,/);
    expect(() => new Webhook(key.webhookSecret).verify(row(db)!.payload, r.requests[0]!.headers)).toThrow();
    const stored = db.raw.prepare('SELECT webhook_secret FROM api_keys WHERE id = ?').get(key.id) as {
      webhook_secret: string;
    };
    expect(stored.webhook_secret).toMatch(/^v1\./);
  });
});

describe('rotating a webhook secret', () => {
  it('signs with the new and the old secret for 24 h (several signatures), then with the new one only', async () => {
    const r = await receiver(ok);
    const { dataDir, db, key, dispatcher } = await dispatcherFixture();
    const secrets = new WebhookSecrets(db, await loadOrCreateSecret(dataDir));
    const rotated = await secrets.rotate(key.id, Date.now());
    await dispatcher.generationFinished(finished('gen_rot1'), { url: r.baseUrl, keyId: key.id });
    await until(() => row(db)?.state === 'delivered', 'the delivery');
    const first = r.requests[0]!;
    expect(first.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=* v1,[A-Za-z0-9+/]+=*$/);
    // A receiver still on the old secret and one already on the new both verify it.
    for (const secret of [key.webhookSecret, rotated])
      expect(() => new Webhook(secret).verify(row(db)!.payload, first.headers)).not.toThrow();

    // 24 h later (receivers check the timestamp against their own clock, so the overlap is moved back).
    const until24h = db.raw
      .prepare('SELECT previous_webhook_secret_until AS t FROM api_keys WHERE id = ?')
      .get(key.id) as {
      t: number;
    };
    expect(until24h.t).toBeGreaterThanOrEqual(Date.now() + 24 * 3_600_000 - 60_000);
    db.raw.prepare('UPDATE api_keys SET previous_webhook_secret_until = ? WHERE id = ?').run(Date.now() - 1, key.id);
    await dispatcher.generationFinished(finished('gen_rot2'), { url: r.baseUrl, keyId: key.id });
    await until(() => r.requests.length === 2 && row(db)?.state === 'delivered', 'the second delivery');
    const second = r.requests[1]!;
    expect(second.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(() => new Webhook(rotated).verify(row(db)!.payload, second.headers)).not.toThrow();
    expect(() => new Webhook(key.webhookSecret).verify(row(db)!.payload, second.headers)).toThrow();
  });
});

describe('old deliveries', () => {
  it('finished ones are deleted after keepFinishedMs on start; pending ones are kept', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-hooks-prune-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const db = openDatabase(dataDir);
    cleanups.push(() => db.close());
    const secrets = new WebhookSecrets(db, await loadOrCreateSecret(dataDir));
    const key = await createKeyWithWebhookSecret(db, secrets, Date.now(), { user: 'lu' });
    const old = Date.now() - 10_000;
    const ids: string[] = [];
    for (const state of ['delivered', 'failed', 'pending']) {
      const r = (await recordDelivery(db, old, finished(`gen_${state}`), { url: 'http://192.0.2.1/', keyId: key.id }))!;
      db.raw
        .prepare('UPDATE webhook_deliveries SET state = ?, next_attempt_at = ? WHERE id = ?')
        .run(state, state === 'pending' ? Date.now() + 60_000 : null, r.id);
      ids.push(r.id);
    }
    const fresh = (await recordDelivery(db, Date.now(), finished('gen_fresh'), {
      url: 'http://192.0.2.1/',
      keyId: key.id,
    }))!;
    db.raw
      .prepare(`UPDATE webhook_deliveries SET state = 'delivered', next_attempt_at = NULL WHERE id = ?`)
      .run(fresh.id);
    const dispatcher = new WebhookDispatcher({
      db,
      secrets,
      policy: { allowPrivate: false, lookup: () => Promise.resolve([]) },
      logger: silentLogger,
      timings: { keepFinishedMs: 5_000 },
    });
    dispatcher.start();
    await dispatcher.stop();
    const left = db.raw.prepare('SELECT id FROM webhook_deliveries ORDER BY generation_id').all() as Array<{
      id: string;
    }>;
    expect(left.map((x) => x.id).sort()).toEqual([fresh.id, ids[2]!].sort());
  });
});

describe('webhooks through the service', () => {
  it('pending deliveries resume after a restart; GET /webhooks/deliveries lists the key’s own, newest first', async () => {
    const got: FakeRequest[] = [];
    let accept = false;
    const r = await receiver((req, res) => {
      got.push(req);
      res.writeHead(accept ? 200 : 500).end();
    });
    const dataDir = await mkdtemp(join(tmpdir(), 'clipdesk-hooks-svc-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const logs: string[] = [];
    const logger: Logger = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
    const options = {
      dataDir,
      allowPrivateWebhooks: true,
      webhookTimings: { initialBackoffMs: 60_000 },
      logger,
    };
    let t = await startTestService(options);
    const made = await t.service.createKey({ user: 'ivy', tier: 'pro' });
    const other = await t.service.createKey({ user: 'ivy', tier: 'pro' });
    await t.service.close();

    // What a generation finishing just before a crash leaves: rows recorded, nothing sent yet.
    const db = await openTestDatabase(dataDir);
    const now = Date.now();
    const first = (await recordDelivery(db, now - 2, finished('gen_a'), { url: r.baseUrl, keyId: made.id }))!;
    const second = (await recordDelivery(db, now - 1, finished('gen_b', 'failed'), {
      url: r.baseUrl,
      keyId: made.id,
    }))!;
    await recordDelivery(db, now, finished('gen_x'), { url: r.baseUrl, keyId: other.id });
    await db.close();

    t = await startTestService(options);
    const c = clientFor(t.service.url, made.key);
    await until(() => got.length === 3, 'the resumed attempts');
    const list = await c.call('GET', '/webhooks/deliveries');
    expect(list.status).toBe(200);
    const body = WebhookDeliveryListResponse.parse(list.body);
    expect(body.result.total).toBe(2);
    expect(body.result.deliveries.map((d) => d.id)).toEqual([second.id, first.id]);
    expect(body.result.deliveries[0]).toMatchObject({
      object: 'webhook_delivery',
      type: 'generation.failed',
      generationId: 'gen_b',
      url: r.baseUrl,
      state: 'pending',
      attempts: 1,
      lastStatus: 500,
      lastError: 'HTTP 500',
    });
    expect(Date.parse(body.result.deliveries[0]!.nextAttemptAt!)).toBeGreaterThan(now);

    // Stopped while pending (their next attempt a minute away), the time passes while the service
    // is down; the next start sends them again with the same webhook-id, and they are accepted.
    await t.service.close();
    const down = await openTestDatabase(dataDir);
    await down.run(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE state = 'pending'`, Date.now());
    await down.close();
    accept = true;
    t = await startTestService(options);
    cleanups.push(() => t.service.close());
    await until(() => got.length === 6, 'the second resume');
    const ids = got.map((q) => q.headers['webhook-id']);
    expect(ids.slice(3).sort()).toEqual(ids.slice(0, 3).sort());
    const c2 = clientFor(t.service.url, made.key);
    const settled = await pollList(c2, (b) => b.result.deliveries.every((d) => d.state === 'delivered'));
    expect(settled.result.deliveries.map((d) => [d.state, d.attempts, d.lastStatus, d.nextAttemptAt])).toEqual([
      ['delivered', 2, 200, null],
      ['delivered', 2, 200, null],
    ]);
    const page = await c2.call('GET', '/webhooks/deliveries?limit=1&page=1');
    expect(WebhookDeliveryListResponse.parse(page.body).result.deliveries.map((d) => d.id)).toEqual([first.id]);
    expect((await c2.call('GET', '/webhooks/deliveries?state=failed')).body.result).toEqual({
      total: 0,
      deliveries: [],
    });
    expect((await c2.call('GET', '/webhooks/deliveries?state=lost')).status).toBe(400);
    // The other key's delivery is its own.
    const theirs = WebhookDeliveryListResponse.parse(
      (await clientFor(t.service.url, other.key).call('GET', '/webhooks/deliveries')).body,
    );
    expect(theirs.result.deliveries.map((d) => d.generationId)).toEqual(['gen_x']);
    // Every attempt verifies with the secret shown when its key was made.
    const payloads = new Map([
      [first.id, first.payload],
      [second.id, second.payload],
    ]);
    for (const q of got) {
      const payload = payloads.get(q.headers['webhook-id']!);
      if (payload !== undefined) expect(() => new Webhook(made.webhookSecret).verify(payload, q.headers)).not.toThrow();
    }
  });

  it('GET /usage says whether the key has a secret, never the secret; no secret in logs, answers or files', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end());
    const logs: string[] = [];
    const logger: Logger = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
    const t = await startTestService({ logger, webhookTimings: { initialBackoffMs: 5, maxAgeMs: 50 } });
    cleanups.push(() => t.stop());
    const made = await t.service.createKey({ user: 'jo', tier: 'pro' });
    expect(made.webhookSecret).toMatch(/^whsec_/);
    const c = clientFor(t.service.url, made.key);
    const usage = await c.call('GET', '/usage');
    expect(usage.status).toBe(200);
    expect(usage.body.result.webhookSecret).toEqual({ exists: true });

    // A key from before webhooks: no secret until first use or a rotation, which shows it once.
    const db = await openTestDatabase(t.dataDir);
    await db.run('UPDATE api_keys SET webhook_secret = NULL WHERE id = ?', made.id);
    expect((await c.call('GET', '/usage')).body.result.webhookSecret).toEqual({ exists: false });
    const rotated = await t.service.rotateWebhookSecret(made.id);
    expect(rotated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated).not.toBe(made.webhookSecret);
    expect((await c.call('GET', '/usage')).body.result.webhookSecret).toEqual({ exists: true });
    await expect(t.service.rotateWebhookSecret('key_0000000000000000')).rejects.toThrow(/no key/);

    // A delivery that fails for good (and is logged) with the secret in use.
    await recordDelivery(db, Date.now(), finished('gen_logged'), { url: `${r.baseUrl}/private/path`, keyId: made.id });
    await db.close();
    await t.service.close();
    const t2 = await startTestService({
      dataDir: t.dataDir,
      logger,
      allowPrivateWebhooks: true,
      webhookTimings: { initialBackoffMs: 5, maxAgeMs: 50 },
    });
    cleanups.push(() => t2.service.close());
    const c2 = clientFor(t2.service.url, made.key);
    const failed = await pollList(c2, (b) => b.result.deliveries[0]?.state === 'failed');
    expect(failed.result.deliveries[0]?.lastError).toBe('HTTP 500');
    expect(logs.some((l) => l.includes('failed after') && l.includes(r.baseUrl) && !l.includes('/private/path'))).toBe(
      true,
    );

    const answers = [
      JSON.stringify(failed),
      JSON.stringify((await c2.call('GET', '/usage')).body),
      JSON.stringify((await c2.call('GET', '/openapi.json')).body),
    ];
    const files = await readdir(t.dataDir, { recursive: true });
    const contents = await Promise.all(
      files.map((f) =>
        readFile(join(t.dataDir, f)).then(
          (b) => b.toString('latin1'),
          () => '',
        ),
      ),
    );
    for (const secret of [made.webhookSecret, rotated]) {
      const material = secret.slice('whsec_'.length);
      for (const text of [...logs, ...answers, ...contents]) expect(text).not.toContain(material);
      // Nor its bytes, raw or in hex.
      const bytes = Buffer.from(material, 'base64');
      for (const text of contents) {
        expect(text).not.toContain(bytes.toString('latin1'));
        expect(text).not.toContain(bytes.toString('hex'));
      }
    }
  });
});

async function pollList(
  c: ReturnType<typeof clientFor>,
  done: (b: WebhookDeliveryListResponse) => boolean,
): Promise<WebhookDeliveryListResponse> {
  const started = Date.now();
  for (;;) {
    const b = WebhookDeliveryListResponse.parse((await c.call('GET', '/webhooks/deliveries')).body);
    if (done(b)) return b;
    if (Date.now() - started > 15_000) throw new Error('timed out waiting for the deliveries');
    await new Promise((r) => setTimeout(r, 10));
  }
}
