import { existsSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { silenceSqliteWarning } from './sqlite.ts';

/**
 * One service per SQLite data folder (docs/service.md, "One service per data folder").
 *
 * The lock is a small SQLite file of its own, `DATA/service.lock`, which the serving process opens
 * in exclusive locking mode and writes once, so it holds SQLite's EXCLUSIVE lock on that file until
 * it closes it. That lock is the operating system's (fcntl on POSIX, LockFileEx on Windows): the
 * kernel drops it the moment its process dies, kill -9 included, and never while it lives, however
 * busy or stopped that process is. No pid or age is ever judged. SQLite also keeps the lock per
 * process correctly (a second connection in the same process is refused too, and closing one never
 * drops another's lock).
 *
 * Beside it, `DATA/service.owner.json` names the holder (pid, address, program, start time) so that
 * another process can say who serves the folder and reach it. It never holds a key. It is only
 * believed while the lock is held: a dead owner's is stale and the next owner replaces it.
 */
export const LOCK_FILE = 'service.lock';
export const OWNER_FILE = 'service.owner.json';

/** Who serves a data folder, as its sidecar says. */
export interface FolderOwner {
  pid: number;
  /** `http://127.0.0.1:PORT/v1`; null while it is still starting (migrating, resuming). */
  url: string | null;
  /** What it is, in the user's words: `clipdesk-service serve`, the app's Local engine … */
  program: string;
  startedAt: string;
}

/** The data folder is served by a live process: the message names it (pid, address). */
export class DataFolderInUseError extends Error {
  readonly dataDir: string;
  readonly owner: FolderOwner | null;
  constructor(dataDir: string, owner: FolderOwner | null) {
    super(dataFolderInUseMessage(dataDir, owner));
    this.name = 'DataFolderInUseError';
    this.dataDir = dataDir;
    this.owner = owner;
  }
}

export function dataFolderInUseMessage(dataDir: string, owner: FolderOwner | null): string {
  const who = owner
    ? `${owner.program} (pid ${owner.pid}, ${owner.url ?? 'still starting'}, since ${owner.startedAt})`
    : 'another process (it has not said which yet)';
  return `the data folder ${dataDir} is already served by ${who}; stop that process first, or use another data folder`;
}

export interface DataFolderLock {
  /** Records the address the holder serves at, for others to reach it. */
  setUrl(url: string): void;
  /** Lets go of the lock (and removes the sidecar); the kernel does the same when the process dies. */
  release(): void;
}

/** SQLite's "database is locked" (SQLITE_BUSY): another process, or connection, holds the lock. */
function isBusy(error: unknown): boolean {
  return (error as { errcode?: unknown }).errcode === 5 || /database is locked/i.test(String(error));
}

function openLockFile(dataDir: string, waitMs: number): DatabaseSync {
  silenceSqliteWarning();
  const sqlite = process.getBuiltinModule('node:sqlite');
  return new sqlite.DatabaseSync(join(dataDir, LOCK_FILE), { timeout: waitMs });
}

/**
 * Takes the data folder's lock for this process, or throws DataFolderInUseError naming its holder.
 * `waitMs` covers another process's brief look at the lock (dataFolderOwner), never a holder: a
 * live holder keeps it for its whole run.
 */
export function takeDataFolderLock(dataDir: string, owner: { program: string; waitMs?: number }): DataFolderLock {
  const db = openLockFile(dataDir, owner.waitMs ?? 2_000);
  try {
    // Exclusive locking mode keeps the lock the first write takes until the connection closes.
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER NOT NULL)');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('DELETE FROM holder');
    db.prepare('INSERT INTO holder (pid) VALUES (?)').run(process.pid);
    db.exec('COMMIT');
  } catch (error) {
    db.close();
    if (isBusy(error)) throw new DataFolderInUseError(dataDir, readOwner(dataDir));
    throw error;
  }
  const record: FolderOwner = {
    pid: process.pid,
    url: null,
    program: owner.program,
    startedAt: new Date().toISOString(),
  };
  writeOwner(dataDir, record);
  let held = true;
  return {
    setUrl(url) {
      if (!held) return;
      record.url = url;
      writeOwner(dataDir, record);
    },
    release() {
      if (!held) return;
      held = false;
      rmSync(join(dataDir, OWNER_FILE), { force: true });
      db.close();
    },
  };
}

/** Written whole (a temp file renamed over it), so a reader never sees half of it. */
function writeOwner(dataDir: string, owner: FolderOwner): void {
  const path = join(dataDir, OWNER_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(owner)}\n`, { mode: 0o644 });
  renameSync(temp, path);
}

/** The sidecar as written, or null when it is missing or not one. */
function readOwner(dataDir: string): FolderOwner | null {
  try {
    const raw = JSON.parse(readFileSync(join(dataDir, OWNER_FILE), 'utf8')) as Partial<FolderOwner>;
    if (typeof raw.pid !== 'number' || typeof raw.program !== 'string' || typeof raw.startedAt !== 'string')
      return null;
    return {
      pid: raw.pid,
      url: typeof raw.url === 'string' ? raw.url : null,
      program: raw.program,
      startedAt: raw.startedAt,
    };
  } catch {
    return null;
  }
}

/**
 * Whether a live process serves `dataDir`, and who: `{ held: false }` when none does (the lock is
 * free or was never taken), else the holder's sidecar (null while a new holder has not written it
 * yet). The look takes SQLite's shared lock for one read and lets go at once; a holder's start
 * waits out that moment (takeDataFolderLock's `waitMs`).
 */
export function dataFolderOwner(dataDir: string): { held: false } | { held: true; owner: FolderOwner | null } {
  if (!existsSync(join(dataDir, LOCK_FILE))) return { held: false };
  const db = openLockFile(dataDir, 0);
  try {
    db.prepare('SELECT count(*) AS n FROM sqlite_master').get();
    return { held: false };
  } catch (error) {
    if (!isBusy(error)) throw error;
    const owner = readOwner(dataDir);
    // A sidecar the dead previous holder left, before the new holder replaced it: not yet known.
    return { held: true, owner: owner && owner.pid !== process.pid && !isAlive(owner.pid) ? null : owner };
  } finally {
    db.close();
  }
}

/** Only to tell a stale sidecar from the holder's own: the lock, not this, says who holds the folder. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Waits until the folder's holder says where it serves, or until no one holds it: the owner, or
 * null (start one's own). A holder still starting (migrating, resuming) has no address yet; after
 * `timeoutMs` this gives up with DataFolderInUseError naming what is known.
 */
export async function waitForDataFolderOwner(
  dataDir: string,
  timeoutMs = 60_000,
  onWait?: (message: string) => void,
): Promise<(FolderOwner & { url: string }) | null> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    const state = dataFolderOwner(dataDir);
    if (!state.held) return null;
    if (state.owner?.url) return { ...state.owner, url: state.owner.url };
    if (Date.now() >= deadline) throw new DataFolderInUseError(dataDir, state.owner);
    if (!said && onWait) {
      said = true;
      onWait(
        `waiting up to ${Math.round(timeoutMs / 1000)} s for the service starting on ${dataDir} (pid ${state.owner?.pid ?? 'not known yet'}) to listen`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
