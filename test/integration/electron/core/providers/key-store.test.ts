import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The provider key store on the real OS keychain (a private D-Bus session with gnome-keyring),
// each operation in a new process, and the same store with no keychain at all.
const child = fileURLToPath(new URL('./key-store-child.ts', import.meta.url));
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

interface Line {
  op: string;
  ok: boolean;
  result?: unknown;
  error?: string;
  code?: string;
}
const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

function inKeyringSession(ops: string[][]): { lines: Line[]; output: string } {
  const home = mkdtempSync(join(tmpdir(), 'clipdesk-provider-keys-'));
  try {
    const steps = ops.map((args) => `${q(node)} ${q(child)} ${args.map(q).join(' ')}`).join('; ');
    const script = `echo -n pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; ${steps}`;
    const res = spawnSync('dbus-run-session', ['--', 'sh', '-c', script], {
      env: { PATH: process.env['PATH'] ?? '', HOME: home, XDG_DATA_HOME: join(home, 'data'), XDG_RUNTIME_DIR: home },
      encoding: 'utf8',
      timeout: 90_000,
    });
    const lines = res.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Line);
    return { lines, output: res.stdout + res.stderr };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const FAL = 'fal-0a1b2c3d:e4f5a6b7c8d9e0f1a2b3';
const REPLICATE = 'r8_Zq9YfS1mTuVwXyZ0123456789abcdefWXYZ';

describe.skipIf(missing.length > 0 || process.platform !== 'linux')('provider keys on a real Secret Service', () => {
  it('keeps one entry per provider across processes, shows only last4, and replaces and removes', () => {
    const { lines, output } = inKeyringSession([
      ['set', 'fal', FAL],
      ['info', 'fal'],
      ['get', 'fal'],
      ['set', 'replicate', REPLICATE],
      ['all'],
      ['info', 'fal', '', '/tmp/clipdesk-engine-b'],
      ['set', 'fal', 'fal-second-key-9876'],
      ['get', 'fal'],
      ['remove', 'fal'],
      ['get', 'fal'],
      ['info', 'replicate'],
      ['set', 'fal', 'fal key with spaces'],
      ['set', 'fal', 'fal-key-line\nbreak'],
      ['info', 'fal'],
    ]);
    expect(lines.map((l) => l.ok)).toEqual([...Array(11).fill(true), false, false, true]);
    expect(lines[0]!.result).toEqual({ configured: true, last4: FAL.slice(-4) });
    expect(lines[1]!.result).toEqual({ configured: true, last4: FAL.slice(-4) }); // a new process
    expect(lines[2]!.result).toBe(FAL);
    expect(lines[4]!.result).toEqual({ fal: FAL, replicate: REPLICATE });
    // Another engine's data folder has its own entries.
    expect(lines[5]!.result).toEqual({ configured: false, last4: null });
    expect(lines[7]!.result).toBe('fal-second-key-9876');
    expect(lines[8]!.result).toEqual({ configured: false, last4: null });
    expect(lines[9]!.result).toBeNull();
    expect(lines[10]!.result).toEqual({ configured: true, last4: 'WXYZ' }); // the other provider's stays
    expect(lines[11]).toMatchObject({ code: 'invalid_input', error: expect.stringMatching(/space or a line break/) });
    expect(lines[12]).toMatchObject({ code: 'invalid_input' });
    expect(lines[13]!.result).toEqual({ configured: false, last4: null }); // nothing stored by a refused key
    // A key appears only where `get`/`all` asked for it, never in an error.
    expect(output.split(FAL).length - 1).toBe(2);
  });
});

describe.skipIf(process.platform !== 'linux')('provider keys with no keychain', () => {
  it('refuses to store with keychain_unavailable, and reads as not configured', () => {
    const env = { PATH: process.env['PATH'] ?? '', HOME: tmpdir() };
    const run = (...args: string[]): Line => {
      const res = spawnSync(node, [child, ...args], { env, encoding: 'utf8', timeout: 30_000 });
      return JSON.parse(res.stdout.trim().split('\n').pop()!) as Line;
    };
    const set = run('set', 'fal', FAL);
    expect(set).toMatchObject({ ok: false, code: 'keychain_unavailable' });
    expect(set.error).toMatch(/No OS keychain is available/);
    expect(set.error).not.toContain(FAL);
    expect(run('info', 'fal').result).toEqual({ configured: false, last4: null });
    expect(run('get', 'fal').result).toBeNull();
    expect(run('all').result).toEqual({});
  });
});
