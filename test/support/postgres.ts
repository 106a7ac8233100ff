import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';

/**
 * A private PostgreSQL cluster for one test file, from the machine's own PostgreSQL binaries
 * (Debian's `postgresql` package; `.ci/run` installs it). Everything lives in one temp directory:
 * the data directory, the log and the unix socket. It listens on 127.0.0.1 only, on a free port,
 * with trust authentication (pg_hba's loopback and local lines only), and fsync off (a test
 * cluster never outlives its run). PostgreSQL refuses to run as root, so as root the cluster runs
 * as the unprivileged system user `clipdesk-test` (created on first use; `nobody` if it cannot
 * be). `stop()` stops it and removes the directory; a process that exits or is signalled without
 * calling it stops and removes its clusters on the way out.
 */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:PORT/postgres` */
  url: string;
  port: number;
  /** The temp directory holding the cluster (data/, postgres.log, the socket). */
  dir: string;
  /** A new, empty database on this cluster; resolves with its URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Fault tests: stops the server, keeping its data (`pg_ctl stop -m fast`: every backend is
   * terminated, clients see 57P01 and then refused connections). Not `-m immediate`: with this
   * cluster's synchronous_commit off, a crash loses the last commits, which a test would then miss.
   */
  halt(): Promise<void>;
  /** Starts a halted server again, on the same port and data. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

const TEST_USER = 'clipdesk-test';

/** The directory of `initdb` and `pg_ctl`, or null: PATH first, then Debian's versioned directories (not on PATH), newest first. */
export function postgresBinDir(): string | null {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const initdb = join(dir, 'initdb');
    // Resolved through links: Debian's /usr/bin wrappers and hand-made links point at the real
    // directory, where pg_ctl sits beside initdb.
    if (existsSync(initdb)) {
      const real = dirname(realpathSync(initdb));
      if (existsSync(join(real, 'pg_ctl'))) return real;
    }
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const dir = join(root, v, 'bin');
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

/** Why the PostgreSQL tests cannot run here, or null when they can. */
export function postgresUnavailable(): string | null {
  if (process.platform === 'win32') return 'private PostgreSQL clusters are set up for Linux and macOS only';
  return postgresBinDir() === null
    ? "no PostgreSQL binaries (initdb, pg_ctl) on PATH or under /usr/lib/postgresql/*/bin; install Debian's postgresql package"
    : null;
}

export interface RunAs {
  uid: number;
  gid: number;
}

/** As root: the unprivileged user the cluster (and PgBouncer, test/support/pgbouncer.ts) runs as. Otherwise null (it runs as we do). */
export function unprivilegedUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  if (lookupUser(TEST_USER) === null) {
    try {
      execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', TEST_USER], {
        stdio: 'ignore',
      });
    } catch {
      // Another test file created it meanwhile, or useradd is missing: looked up again below.
    }
  }
  const user = lookupUser(TEST_USER) ?? lookupUser('nobody');
  if (user === null) throw new Error(`running as root, and neither ${TEST_USER} nor nobody exists to run PostgreSQL`);
  return user;
}

function lookupUser(name: string): RunAs | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

/**
 * A port free on loopback for a server the caller starts next. Taken below the kernel's ephemeral
 * range (32768–60999 on Linux): a port that `listen(0)` gave, once closed, can be taken by any
 * outgoing connection (a database client's) before the caller listens on it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolvePort) => {
      const server = createServer();
      server.once('error', () => resolvePort(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolvePort(true)));
    });
    if (free) return port;
  }
}

/** The environment the PostgreSQL tools run with: no PG* variables of the caller's, a plain locale. */
function toolEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PG') && !k.startsWith('LC_')) env[k] = v;
  return { ...env, LANG: 'C', LC_ALL: 'C' };
}

function run(bin: string, args: string[], cwd: string, as: RunAs | null): Promise<string> {
  return new Promise((done, fail) => {
    execFile(bin, args, { cwd, env: toolEnv(), ...(as ?? {}), timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`${bin} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
      else done(stdout);
    });
  });
}

/** Clusters not yet stopped, stopped synchronously if the process leaves without stopping them. */
const live = new Map<string, () => void>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  const stopAll = () => {
    for (const stop of [...live.values()]) stop();
  };
  process.once('exit', stopAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      stopAll();
      // Listeners of our own no longer hold the signal: raised again, it does what it would have.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  }
}

export async function startPostgres(): Promise<PrivatePostgres> {
  const binDir = postgresBinDir();
  if (binDir === null) throw new Error(postgresUnavailable() ?? 'no PostgreSQL');
  const as = unprivilegedUser();
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-pg-'));
  const data = join(dir, 'data');
  const socketDir = join(dir, 'sock');
  const logFile = join(dir, 'postgres.log');
  const pgCtl = join(binDir, 'pg_ctl');
  let started = false;

  const stopSync = () => {
    live.delete(dir);
    if (started) {
      try {
        execFileSync(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop'], {
          cwd: dir,
          env: toolEnv(),
          ...(as ?? {}),
          stdio: 'ignore',
          timeout: 30_000,
        });
      } catch {
        // Already stopped.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  hookExit();
  live.set(dir, stopSync);

  try {
    await mkdir(socketDir);
    if (as) {
      await chown(dir, as.uid, as.gid);
      await chown(socketDir, as.uid, as.gid);
    }
    await run(
      join(binDir, 'initdb'),
      [
        '-D',
        data,
        '-U',
        'postgres',
        '--auth-local=trust',
        '--auth-host=trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ],
      dir,
      as,
    );
    // A port found free may be taken before the server binds it: a few tries.
    let port = 0;
    let options = '';
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      options = [
        `-p ${port}`,
        "-c listen_addresses='127.0.0.1'",
        `-c unix_socket_directories='${socketDir}'`,
        '-c fsync=off',
        '-c synchronous_commit=off',
        '-c full_page_writes=off',
        '-c max_connections=300',
      ].join(' ');
      try {
        await run(pgCtl, ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'], dir, as);
        started = true;
        break;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    let stopping: Promise<void> | null = null;
    return {
      url,
      port,
      dir,
      async createDatabase(name) {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`CREATE DATABASE ${name}`);
        } finally {
          await client.end();
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      async halt() {
        await run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop'], dir, as);
        started = false;
      },
      async resume() {
        await run(pgCtl, ['-D', data, '-l', logFile, '-o', options, '-w', '-t', '60', 'start'], dir, as);
        started = true;
      },
      stop() {
        stopping ??= (async () => {
          live.delete(dir);
          await run(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop'], dir, as).catch(() => undefined);
          started = false;
          await rm(dir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  } catch (error) {
    stopSync();
    throw error;
  }
}
