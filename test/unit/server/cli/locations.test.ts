import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveListenDatabase, resolveLocations } from '../../../../server/cli/locations.ts';
import { UsageError } from '../../../../server/cli/usage-error.ts';

const data = resolve('/srv/clipdesk');

describe('--database, --storage and their environment variables', () => {
  it('absent: SQLite and files in the data directory', () => {
    expect(resolveLocations({ data }, {})).toEqual({
      dataDir: data,
      database: { kind: 'sqlite', dataDir: data },
      storage: { kind: 'file', dataDir: data },
    });
  });

  it('sqlite:, file: and paths naming the data directory are the same thing', () => {
    for (const database of [
      'sqlite:',
      `sqlite:${join(data, 'service.db')}`,
      `sqlite://${join(data, 'service.db')}`,
      join(data, 'service.db'),
    ])
      expect(resolveLocations({ data, database }, {}).database).toEqual({ kind: 'sqlite', dataDir: data });
    for (const storage of ['file:', `file:${data}`, `file://${data}`, data])
      expect(resolveLocations({ data, storage }, {}).storage).toEqual({ kind: 'file', dataDir: data });
  });

  it('a path elsewhere is refused, not ignored', () => {
    expect(() => resolveLocations({ data, database: '/elsewhere/service.db' }, {})).toThrow(UsageError);
    expect(() => resolveLocations({ data, storage: 'file:/elsewhere' }, {})).toThrow(/data directory/);
  });

  it('postgres:// and s3:// are parsed, from the variables too', () => {
    const env = {
      CLIPDESK_DATABASE_URL: 'postgresql://app:secret@db.internal:5432/clipdesk',
      CLIPDESK_STORAGE_URL: 's3://media-bucket/team/a/',
    };
    const locations = resolveLocations({ data }, env);
    expect(locations.database).toEqual({ kind: 'postgres', url: env.CLIPDESK_DATABASE_URL });
    expect(locations.storage).toEqual({ kind: 's3', bucket: 'media-bucket', prefix: 'team/a' });
  });

  it('a flag wins over its variable; an empty variable is absent', () => {
    const env = { CLIPDESK_DATABASE_URL: 'postgres://x@h/db', CLIPDESK_STORAGE_URL: '' };
    const locations = resolveLocations({ data, database: 'sqlite:' }, env);
    expect(locations.database.kind).toBe('sqlite');
    expect(locations.storage.kind).toBe('file');
  });

  it('other schemes and malformed URLs are usage errors that never echo a password', () => {
    for (const [values, env] of [
      [{ database: 'mysql://root:hunter2@h/db' }, {}],
      [{}, { CLIPDESK_DATABASE_URL: 'postgres://root:hunter2@[bad/db' }],
      [{ storage: 'gs://bucket' }, {}],
      [{ storage: 's3://' }, {}],
      [{ database: '' }, {}],
    ] as const) {
      let message = '';
      try {
        resolveLocations({ data, ...values }, env);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        message = (error as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain('hunter2');
    }
  });
});

describe('--listen-database and CLIPDESK_LISTEN_DATABASE_URL', () => {
  const postgres = { kind: 'postgres', url: 'postgres://app@pgbouncer:6432/clipdesk' } as const;
  const sqlite = { kind: 'sqlite', dataDir: data } as const;

  it('absent: undefined (the database URL serves); the flag wins over the variable; an empty variable is absent', () => {
    expect(resolveListenDatabase(undefined, postgres, {})).toBeUndefined();
    expect(resolveListenDatabase(undefined, postgres, { CLIPDESK_LISTEN_DATABASE_URL: '' })).toBeUndefined();
    const env = { CLIPDESK_LISTEN_DATABASE_URL: 'postgresql://app@db.internal:5432/clipdesk' };
    expect(resolveListenDatabase(undefined, postgres, env)).toBe(env.CLIPDESK_LISTEN_DATABASE_URL);
    expect(resolveListenDatabase('postgres://app@primary:5432/clipdesk', postgres, env)).toBe(
      'postgres://app@primary:5432/clipdesk',
    );
  });

  it('refused beside SQLite, naming the flag or the variable that set it', () => {
    expect(() => resolveListenDatabase('postgres://app@db/clipdesk', sqlite, {})).toThrow(
      /^--listen-database is for a PostgreSQL database/,
    );
    expect(() =>
      resolveListenDatabase(undefined, sqlite, { CLIPDESK_LISTEN_DATABASE_URL: 'postgres://app@db/clipdesk' }),
    ).toThrow(/^CLIPDESK_LISTEN_DATABASE_URL is for a PostgreSQL database/);
  });

  it('other schemes, malformed URLs and a missing value are usage errors that never echo a password', () => {
    for (const [value, env] of [
      ['mysql://root:hunter2@h/db', {}],
      [undefined, { CLIPDESK_LISTEN_DATABASE_URL: 'postgres://root:hunter2@[bad/db' }],
      ['', {}],
      [true, {}],
    ] as const) {
      let message = '';
      try {
        resolveListenDatabase(value, postgres, env);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        message = (error as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain('hunter2');
    }
  });
});
