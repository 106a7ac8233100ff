// The `clipdesk-service` parser, in process: --version, every command's --help, and a mistyped
// command or flag answered in one line with a suggestion and the command's usage (exit 2).
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../../server/cli/program.ts';
import { packageVersion } from '../../../../shared/node/cli-program.ts';

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l) }, { onStop: () => undefined });
  return { code, stdout: out.map((l) => `${l}\n`).join(''), stderr: err.map((l) => `${l}\n`).join('') };
}

const dataDir = mkdtempSync(join(tmpdir(), 'clipdesk-program-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const COMMANDS = [
  'serve',
  'migrate',
  'fsck',
  'export',
  'import',
  'keys',
  'keys create',
  'keys list',
  'keys revoke',
  'keys rotate-webhook-secret',
  'users',
  'users set-tier',
  'users set-limits',
  'providers',
  'providers list',
  'providers set-key',
  'providers remove-key',
];

describe('clipdesk-service', () => {
  it('--version prints the package version', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
  });

  it.each(COMMANDS)('%s --help prints its own usage', async (command) => {
    const res = await run([...command.split(' '), '--help']);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(new RegExp(`^Usage: clipdesk-service ${command} `));
    expect(res.stdout).not.toContain('Operators change prices'); // not the whole program's help
  });

  it('serve --help says the signals it stops on, in plain words', async () => {
    const res = await run(['serve', '--help']);
    expect(res.stdout).toContain('Runs the service until SIGTERM or SIGINT.');
    // No source text leaks into the help (a replaced word once put a type there).
    expect(res.stdout).not.toMatch(/=>|\{ onStop/);
  });

  it('users set-limits --help is that command\'s help, not "unknown option" and the whole usage', async () => {
    const res = await run(['users', 'set-limits', '--help']);
    expect(res.stdout).toContain('--rpm <N>');
    expect(res.stdout.split('\n').length).toBeLessThan(30);
  });

  it('a mistyped command or flag: one line with a suggestion, then the usage; exit 2', async () => {
    const command = await run(['keys', 'craete', '--user', 'ann']);
    expect(command).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "clipdesk-service: unknown command 'craete' (Did you mean create?)\nUsage: clipdesk-service keys COMMAND [options]\n",
    });
    const flag = await run(['users', 'set-limits', 'ann', '--rmp', '5']);
    expect(flag.code).toBe(2);
    const lines = flag.stderr.trimEnd().split('\n');
    expect(lines).toEqual([
      "clipdesk-service: unknown option '--rmp' (Did you mean --rpm?)",
      expect.stringMatching(/^Usage: clipdesk-service users set-limits NAME \[--rpm N\]/),
    ]);
    // A command's own refusal is one line and its usage too, not the whole help.
    const missing = await run(['keys', 'create', '--data', dataDir]);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trimEnd().split('\n')).toEqual([
      'clipdesk-service: keys create needs --user NAME',
      expect.stringMatching(/^Usage: clipdesk-service keys create --user NAME /),
    ]);
  });

  it('no command prints the whole usage and exits 2; help and --help exit 0', async () => {
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toContain('clipdesk-service serve');
    for (const argv of [['help'], ['--help'], ['-h']]) {
      const res = await run(argv);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('Operators change prices');
    }
  });
});
