import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort, unprivilegedUser } from './postgres.ts';
import type { PrivatePostgres } from './postgres.ts';

/**
 * A private PgBouncer in front of a private cluster (test/support/postgres.ts), from the machine's
 * own binary (Debian's `pgbouncer` package; `.ci/run` installs it): `pool_mode = transaction`, as
 * docs/scaling.md recommends at ~100×, and without `max_prepared_statements` (1.18 has none), so a
 * client's prepared statements and session settings do not follow it from one transaction to the
 * next. Its config, auth file and log live in one temp directory; it listens on 127.0.0.1 on a free
 * port and, as the cluster trusts loopback, authenticates nobody either (`auth_type = trust`; the
 * cluster's user must still be in the auth file). PgBouncer refuses to run as root: as root it runs
 * as the cluster's unprivileged user. `stop()` ends it and removes the directory; a process that
 * exits, or is signalled, without calling it ends it on the way out.
 */
export interface PrivatePgBouncer {
  /** `postgres://postgres@127.0.0.1:PORT/` (append the database name). */
  base: string;
  /** The database's URL through PgBouncer. */
  urlFor(database: string): string;
  /** The admin console's URL (`SHOW SERVERS`, `SHOW POOLS`…). */
  adminUrl: string;
  /** PgBouncer's log so far (for a failing test's message). */
  log(): string;
  stop(): Promise<void>;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** The pgbouncer binary: PATH first, then Debian's /usr/sbin (not on a user's PATH). */
export function pgbouncerBinary(): string | null {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) if (dir !== '' && existsSync(join(dir, 'pgbouncer'))) return join(dir, 'pgbouncer');
  return null;
}

/** Why the PgBouncer tests cannot run here, or null when they can. */
export function pgbouncerUnavailable(): string | null {
  if (process.platform === 'win32') return 'a private PgBouncer is set up for Linux and macOS only';
  return pgbouncerBinary() === null
    ? "no pgbouncer binary on PATH or in /usr/sbin; install Debian's pgbouncer package"
    : null;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

export async function startPgBouncer(cluster: PrivatePostgres): Promise<PrivatePgBouncer> {
  const binary = pgbouncerBinary();
  if (binary === null) throw new Error(pgbouncerUnavailable() ?? 'no pgbouncer');
  const as = unprivilegedUser();
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-pgbouncer-'));
  const logFile = join(dir, 'pgbouncer.log');
  let child: ChildProcess | undefined;
  const killSync = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  // Ended with the process, also on a signal (raised again once no listener of ours holds it, as
  // test/support/postgres.ts does for its clusters).
  const onSignal = (signal: NodeJS.Signals) => {
    killSync();
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  const unhook = () => {
    process.off('exit', killSync);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  process.once('exit', killSync);
  for (const signal of SIGNALS) process.once(signal, onSignal);
  try {
    await writeFile(join(dir, 'users.txt'), '"postgres" ""\n');
    // A port found free may be taken before PgBouncer binds it: a few tries.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      await writeFile(
        join(dir, 'pgbouncer.ini'),
        [
          '[databases]',
          `* = host=127.0.0.1 port=${cluster.port}`,
          '[pgbouncer]',
          'listen_addr = 127.0.0.1',
          `listen_port = ${port}`,
          'unix_socket_dir =',
          'auth_type = trust',
          `auth_file = ${join(dir, 'users.txt')}`,
          'admin_users = postgres',
          'pool_mode = transaction',
          'default_pool_size = 20',
          'max_client_conn = 500',
          `logfile = ${logFile}`,
          `pidfile = ${join(dir, 'pgbouncer.pid')}`,
          '',
        ].join('\n'),
      );
      if (as) for (const name of ['', 'users.txt', 'pgbouncer.ini']) await chown(join(dir, name), as.uid, as.gid);
      const started = spawn(binary, [join(dir, 'pgbouncer.ini')], { cwd: dir, stdio: 'ignore', ...(as ?? {}) });
      child = started;
      let exited = false;
      started.once('exit', () => {
        exited = true;
      });
      const end = Date.now() + 10_000;
      while (!exited && !(await accepts(port)) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      if (!exited && (await accepts(port))) {
        const base = `postgres://postgres@127.0.0.1:${port}/`;
        let stopping: Promise<void> | null = null;
        return {
          base,
          urlFor: (database) => base + database,
          adminUrl: `${base}pgbouncer`,
          log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
          stop() {
            stopping ??= (async () => {
              unhook();
              if (started.exitCode === null && started.signalCode === null) {
                const gone = new Promise((r) => started.once('exit', r));
                started.kill('SIGINT');
                await gone;
              }
              await rm(dir, { recursive: true, force: true });
            })();
            return stopping;
          },
        };
      }
      started.kill('SIGKILL');
      if (attempt >= 3) {
        const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
        throw new Error(`pgbouncer did not start on 127.0.0.1:${port}:\n${log}`);
      }
    }
  } catch (error) {
    unhook();
    killSync();
    throw error;
  }
}
