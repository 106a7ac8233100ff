import { execFile, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolEnv } from '../child-env.ts';

/**
 * Children die with their parent, even when the parent is SIGKILLed and runs no cleanup.
 *
 * ffmpeg itself cannot notice: it ignores SIGPIPE (so a closed stderr does not stop it), and EOF on
 * its stdin means nothing to it (it only reacts to a `q` keypress; we pass `-nostdin` anyway). So
 * on POSIX every ffmpeg/ffprobe is watched by a small `/bin/sh` that notices the parent's death:
 * runs spawned here directly share one reaper per process (see REAPER below); fluent-ffmpeg's runs,
 * which spawn the binary themselves, each run under this per-run watchdog:
 *
 * - the watchdog's stdin is a pipe whose other end only the parent holds. A background `read`
 *   loop blocks on it; when the parent dies, for any reason, the kernel closes that end, `read`
 *   sees EOF and the watchdog SIGKILLs ffmpeg at once (no polling, no delay). Node also closes
 *   the pipe when the watchdog itself exits, so killing the watchdog alone cannot orphan ffmpeg;
 * - ffmpeg gets /dev/null as stdin, so it never competes for the pipe;
 * - SIGTERM/SIGINT/SIGHUP to the watchdog SIGKILL ffmpeg (how a fluent-ffmpeg command is killed
 *   through its public `kill`);
 *
 * The exit status of ffmpeg is the watchdog's exit status (128 + N when a signal killed it).
 * Windows has no /bin/sh: there ffmpeg runs bare (a Job Object would be the equivalent there).
 */
const SCRIPT = `exec 3<&0 </dev/null
"$@" &
child=$!
{ while read -r _ <&3; do :; done; kill -KILL "$child" 2>/dev/null; } &
reader=$!
exec 3<&-
trap 'kill -KILL "$child" 2>/dev/null' HUP INT TERM
wait "$child"
code=$?
if [ "$code" -gt 128 ]; then wait "$child"; code=$?; fi
kill "$reader" 2>/dev/null
exit "$code"`;

export const watchdogAvailable = process.platform !== 'win32';

/**
 * Direct runs (thumbnails, probes, the service's renders and transcodes) share one reaper per
 * process instead of a watchdog shell for the whole of each run. The reaper is a `/bin/sh` in its
 * own process group whose stdin is a pipe only this process holds. Each run is spawned in its own
 * process group (`detached`) and registers that group (`+PGID`) with the reaper; this process
 * withdraws it (`-PGID`) once the run has exited. When this process dies, for any reason, the
 * pipe closes, the reaper's `read` sees end of file, and it SIGKILLs every group still registered.
 *
 * The run registers itself, not this process: it starts as a `/bin/sh` (REGISTER) holding the
 * reaper's pipe on fd 3, writes `+ $$` there, closes fd 3 and execs the binary under the same
 * pid. The pipe cannot reach end of file while the run still holds it, so a parent SIGKILLed at
 * any moment, even between spawn() and its next statement, leaves a run that has either not
 * registered yet (and the reaper waits for it) or has (and is killed). Registering from this
 * process after spawn() returned left that instant uncovered. The shell's cost is one exec.
 */
const REAPER = `pids=' '
while read -r op pid; do
  case "$op" in
    +) pids="$pids$pid " ;;
    -) keep=' '; for p in $pids; do [ "$p" = "$pid" ] || keep="$keep$p "; done; pids=$keep ;;
  esac
done
for p in $pids; do kill -KILL "-$p" 2>/dev/null; done`;

/**
 * `/bin/sh -c REGISTER sh BINARY ARGS…`: registers its pid with the reaper on fd 3, then becomes
 * the binary. SIGPIPE is ignored only for that write (a reaper gone leaves the run unguarded, not
 * killed), and restored before the exec.
 */
const REGISTER = `trap '' PIPE; printf '+ %s\\n' "$$" >&3 2>/dev/null; trap - PIPE; exec "$@" 3>&-`;

let reaper: ChildProcess | null = null;

function reaperInput(): Writable | null {
  if (!watchdogAvailable) return null;
  if (reaper === null) {
    try {
      const started = spawn('/bin/sh', ['-c', REAPER], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        env: toolEnv(),
      });
      started.once('error', () => undefined);
      started.once('exit', () => {
        if (reaper === started) reaper = null;
      });
      started.stdin?.on('error', () => undefined);
      // Neither the reaper nor its pipe may keep this process alive: the reaper exists for its death.
      started.unref();
      (started.stdin as Socket | null)?.unref();
      reaper = started;
    } catch {
      return null;
    }
  }
  return reaper.stdin;
}

/** The shared reaper's pid while it runs (it is a child of this process by design). */
export function reaperPid(): number | null {
  return reaper?.pid ?? null;
}

export interface WatchedCommand {
  command: string;
  args: string[];
  /** Own process group: kill it with `killTree`. */
  detached: boolean;
  /**
   * The reaper's pipe, to pass as the child's fd 3 (stdio[3]), through which the run registers
   * itself; null when the run is not guarded (Windows, or no reaper could start).
   */
  reaperPipe: Writable | null;
  /** Call once the run has exited: withdraws its group from the reaper. */
  withdraw(pid: number): void;
}

/**
 * The spawn command for `binary args`: under the reaper (REGISTER), in its own process group,
 * where there is one; bare otherwise. Starts the reaper first when needed: it must exist when the
 * run does.
 */
export function watchedCommand(binary: string, args: string[]): WatchedCommand {
  const input = reaperInput();
  if (input === null || input.destroyed)
    return { command: binary, args, detached: watchdogAvailable, reaperPipe: null, withdraw: () => undefined };
  return {
    command: '/bin/sh',
    args: ['-c', REGISTER, 'sh', binary, ...args],
    detached: true,
    reaperPipe: input,
    withdraw(pid) {
      if (!input.destroyed) input.write(`- ${pid}\n`);
    },
  };
}

/** Kills a child spawned from `watchedCommand`, with everything in its process group. */
export function killTree(child: ChildProcess, detached: boolean): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (detached) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // Already gone.
  }
}

let scriptDir: string | null = null;
const wrappers = new Map<string, Promise<string>>();

/**
 * fluent-ffmpeg spawns the binary it is given by path (for its capability checks too), so the
 * watchdog for its runs is a tiny executable script per ffmpeg binary, in a private temp folder
 * removed on exit. If that cannot run (a `noexec` /tmp), the binary is used bare.
 */
export function fluentBinary(binary: string): Promise<string> {
  if (!watchdogAvailable) return Promise.resolve(binary);
  let wrapper = wrappers.get(binary);
  if (!wrapper) {
    wrapper = makeWrapper(binary);
    wrappers.set(binary, wrapper);
  }
  return wrapper;
}

async function makeWrapper(binary: string): Promise<string> {
  try {
    if (scriptDir === null) {
      const dir = mkdtempSync(join(tmpdir(), 'clipdesk-ffmpeg-'));
      scriptDir = dir;
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    }
    const file = join(scriptDir, `ffmpeg-${wrappers.size}`);
    const quoted = `'${binary.replace(/'/g, `'\\''`)}'`;
    writeFileSync(file, `#!/bin/sh\nset -- ${quoted} "$@"\n${SCRIPT}\n`, { mode: 0o700 });
    const works = await new Promise<boolean>((resolve) =>
      execFile(file, ['-version'], { timeout: 30_000, env: toolEnv() }, (err) => resolve(err === null)),
    );
    return works ? file : binary;
  } catch {
    return binary;
  }
}
