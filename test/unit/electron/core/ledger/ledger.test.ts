import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openJournalDatabase } from '../../../../../electron/core/jobs/index.ts';
import { createLedger, utcDay } from '../../../../../electron/core/ledger/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'clipdesk-ledger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.UTC(2026, 10, 23, 12);
const open = (file: string) => createLedger({ db: openJournalDatabase(join(dir, file)), now: () => T0 });
const charge = (jobId: string, price: number, day = '2026-11-23') => ({
  jobId,
  profileId: 'local',
  key: 'ab12',
  day,
  itemIds: [`med_${jobId}`],
  price,
});

describe('the ledger', () => {
  it('records one charge per job, however often it is recorded, and delivered only goes forward', () => {
    const ledger = open('once.db');
    ledger.record(charge('j1', 0.046));
    ledger.record(charge('j1', 0.046));
    ledger.record({ ...charge('j1', 0.046), delivered: true });
    ledger.record({ ...charge('j1', 0.046), delivered: false });
    expect(ledger.all('local')).toEqual([{ ...charge('j1', 0.046), delivered: true, chargedAt: T0 }]);
    ledger.close();
  });

  it('sums a profile’s charges by UTC day and month, and keeps them across a restart', () => {
    const first = open('sums.db');
    first.record(charge('a', 0.1, '2026-11-01'));
    first.record(charge('b', 0.2, '2026-11-23'));
    first.record(charge('c', 0.004, '2026-11-23'));
    first.record(charge('old', 5, '2026-10-31'));
    first.record({ ...charge('other', 9), profileId: 'remote' });
    first.markDelivered('b');
    first.close();
    const again = open('sums.db');
    expect(again.spent('local', '2026-11-23', '2026-11-23')).toBe(0.204);
    expect(again.spent('local', '2026-11-01', '2026-11-23')).toBe(0.304);
    expect(again.get('b')?.delivered).toBe(true);
    expect(again.get('a')?.delivered).toBe(false);
    again.close();
  });

  it('keeps the key of each submit: the first note of an attempt stands, and every key is the app’s', () => {
    const ledger = open('submits.db');
    const note = (attempt: number, key: string) =>
      ledger.noteSubmit({ jobId: 'j1', profileId: 'local', attempt, key, at: T0 });
    note(1, 'old1');
    // Resumed after a restart on a new key: still the first submit, still its key.
    note(1, 'new2');
    expect(ledger.submitKey('j1')).toBe('old1');
    note(2, 'new2');
    expect(ledger.submitKey('j1')).toBe('new2');
    expect(ledger.submitKey('never')).toBeNull();
    ledger.record(charge('j2', 0.1));
    expect(ledger.keys('local')).toEqual(['ab12', 'new2', 'old1']);
    expect(ledger.keys('remote')).toEqual([]);
    ledger.close();
  });

  it('names the UTC day of a charge, whatever the local time zone', () => {
    expect(utcDay('2026-11-23T23:59:59.999Z')).toBe('2026-11-23');
    expect(utcDay(Date.UTC(2026, 11, 1))).toBe('2026-12-01');
  });

  it('loses nothing committed and holds no half-written charge after a kill mid-write', async () => {
    const file = join(dir, 'killed.db');
    // A child records charges as fast as it can and prints each one after its commit; it is killed
    // with SIGKILL in the middle of that.
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `
        import { createLedger } from ${JSON.stringify(new URL('../../../../../electron/core/ledger/index.ts', import.meta.url).href)};
        import { openJournalDatabase } from ${JSON.stringify(new URL('../../../../../electron/core/jobs/index.ts', import.meta.url).href)};
        const ledger = createLedger({ db: openJournalDatabase(${JSON.stringify(file)}), now: Date.now });
        for (let i = 0; ; i++) {
          ledger.record({ jobId: 'j' + i, profileId: 'local', key: 'ab12', day: '2026-11-23', itemIds: ['m' + i, 'n' + i], price: 0.01 });
          process.stdout.write(i + '\\n');
        }
        `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let committed = -1;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const last = chunk.toString().trim().split('\n').at(-1);
        if (last !== undefined) committed = Number(last);
        if (committed >= 50) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((r) => child.once('exit', r));
    const ledger = open('killed.db');
    const all = ledger.all('local');
    expect(all.length).toBeGreaterThanOrEqual(committed + 1);
    for (const c of all) expect(c.itemIds).toHaveLength(2);
    ledger.close();
  });
});
