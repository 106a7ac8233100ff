import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const child = fileURLToPath(new URL('./keychain-child.ts', import.meta.url));
const node = process.execPath;

function has(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = ['dbus-run-session', 'gnome-keyring-daemon'].filter((c) => !has(c));
if (missing.length > 0 || process.platform !== 'linux') {
  console.warn(
    `keychain tests skipped: ${process.platform !== 'linux' ? 'not Linux' : `${missing.join(' and ')} not installed`} ` +
      '(install gnome-keyring and dbus; .ci/run does)',
  );
}

interface Line {
  op: string;
  ok: boolean;
  result?: unknown;
  error?: string;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Runs the ops one process each, inside one private D-Bus session with an unlocked gnome-keyring. */
function inKeyringSession(ops: string[][]): Line[] {
  const home = mkdtempSync(join(tmpdir(), 'clipdesk-keyring-'));
  try {
    const steps = ops.map((args) => `${q(node)} ${q(child)} ${args.map(q).join(' ')}`).join('; ');
    const script = `echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; ${steps}`;
    const res = spawnSync('dbus-run-session', ['--', 'sh', '-c', script], {
      env: { PATH: process.env['PATH'] ?? '', HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_RUNTIME_DIR: home },
      encoding: 'utf8',
      timeout: 60_000,
    });
    return res.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

describe.skipIf(missing.length > 0 || process.platform !== 'linux')('keychain on a real Secret Service', () => {
  it('stores, reads after a process restart, replaces and deletes', () => {
    const lines = inKeyringSession([
      ['status'],
      ['set', 'profile-a', 'sk-first-1111'],
      ['get', 'profile-a'],
      ['set', 'profile-a', 'sk-second-2222'],
      ['get', 'profile-a'],
      ['info', 'profile-a'],
      ['get', 'profile-b'],
      ['delete', 'profile-a'],
      ['get', 'profile-a'],
      ['delete', 'profile-a'],
    ]);
    expect(lines.map((l) => l.ok)).toEqual(Array(10).fill(true));
    expect(lines[0]!.result).toMatchObject({ backend: 'secret-service', available: true });
    expect(lines[2]!.result).toBe('sk-first-1111'); // read by a new process
    expect(lines[4]!.result).toBe('sk-second-2222'); // replaced
    expect(lines[5]!.result).toEqual({ hasKey: true, last4: '2222', backend: 'secret-service' });
    expect(lines[6]!.result).toBeNull();
    expect(lines[7]!.result).toBe(true);
    expect(lines[8]!.result).toBeNull();
    expect(lines[9]!.result).toBe(false);
  });
});

describe.skipIf(process.platform !== 'linux')('keychain without a session bus', () => {
  it("reports backend 'none' with a clear message instead of using the kernel keyring", () => {
    const env = { PATH: process.env['PATH'] ?? '', HOME: tmpdir() };
    const run = (...args: string[]): Line => {
      const res = spawnSync(node, [child, ...args], { env, encoding: 'utf8', timeout: 30_000 });
      return JSON.parse(res.stdout.trim().split('\n').pop()!) as Line;
    };
    const status = run('status');
    expect(status.result).toMatchObject({ backend: 'none', available: false });
    const { message, detail } = status.result as { message: string; detail?: string };
    expect(message).toMatch(/No OS keychain is available.*Secret Service.*CLIPDESK_API_KEY/);
    // The UI shows `message`: the native library's D-Bus text stays in `detail` (for doctor and logs).
    expect(message).not.toMatch(/dbus|platform failure/i);
    expect(detail).toMatch(/\S/);
    const set = run('set', 'profile-a', 'sk-nowhere');
    expect(set.ok).toBe(false);
    expect(set.error).toMatch(/SecretStoreUnavailableError: No OS keychain/);
    expect(run('get', 'profile-a').result).toBeNull();
    expect(run('info', 'profile-a').result).toEqual({ hasKey: false, last4: null, backend: 'none' });
  });
});
