// The `clipdesk` parser, in process: --version, every command's --help, and a mistyped command or
// flag answered in one line with a suggestion and the command's usage (exit 2).
import { describe, expect, it } from 'vitest';
import { commandFirst, main } from '../../../../electron/cli/main.ts';
import type { CliIo } from '../../../../electron/cli/io.ts';
import { packageVersion } from '../../../../shared/node/cli-program.ts';

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    readStdin: () => Promise.resolve(''),
    env: {},
    interactive: false,
  };
  const code = await main(argv, io);
  return { code, stdout, stderr };
}

/** Every command a user can type, as the top-level help lists them. */
const COMMANDS = [
  'generate',
  'generate video',
  'generate image',
  'generations',
  'generations get',
  'generations wait',
  'generations cancel',
  'generations list',
  'media',
  'media list',
  'media download',
  'upload',
  'models',
  'providers',
  'usage',
  'login',
  'logout',
  'profiles',
  'profiles list',
  'profiles use',
  'doctor',
  'mcp',
];

describe('clipdesk', () => {
  it('--version prints the package version', async () => {
    expect(await run(['--version'])).toEqual({ code: 0, stdout: `${packageVersion()}\n`, stderr: '' });
    expect(packageVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it.each(COMMANDS)('%s --help prints its own usage', async (command) => {
    const res = await run([...command.split(' '), '--help']);
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout).toMatch(new RegExp(`^Usage: clipdesk ${command} `));
    expect(res.stdout).not.toContain('Exit codes:'); // not the whole program's help
  });

  it('takes flags before the command, as it always has', async () => {
    expect(commandFirst(['--data', 'D', '--json', 'doctor'])).toEqual(['doctor', '--data', 'D', '--json']);
    expect(commandFirst(['--prompt', 'video', 'generate', 'image', '--out', 'o'])).toEqual([
      'generate',
      'image',
      '--prompt',
      'video',
      '--out',
      'o',
    ]);
    expect(commandFirst(['media', 'download', 'med_1', '--out', 'o'])).toEqual([
      'media',
      'download',
      'med_1',
      '--out',
      'o',
    ]);
    expect(commandFirst(['upload', 'a.png', '--json'])).toEqual(['upload', 'a.png', '--json']);
    expect(commandFirst(['--data', 'D', 'profiles', 'use', 'studio'])).toEqual([
      'profiles',
      'use',
      '--data',
      'D',
      'studio',
    ]);
    expect(commandFirst(['--print-config', 'claude', 'mcp'])).toEqual(['mcp', '--print-config', 'claude']);
    const res = await run(['--json', 'doctor', '--help']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: clipdesk doctor /);
  });

  it('--help and no command print the whole help (exit 0 and 2)', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes: 0 ok, 2 usage');
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(help.stdout);
  });

  it('a mistyped command or flag: one line with a suggestion, then the usage; exit 2', async () => {
    const command = await run(['genrate', 'video']);
    expect(command.code).toBe(2);
    expect(command.stderr).toBe(
      "clipdesk: unknown command 'genrate' (Did you mean generate?)\nUsage: clipdesk [--base-url URL] [--data DIR] COMMAND [options]\n",
    );
    const flag = await run(['generate', 'video', '--promt', 'a fox']);
    expect(flag.code).toBe(2);
    const lines = flag.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe("clipdesk: unknown option '--promt' (Did you mean --prompt?)");
    expect(lines[1]).toMatch(/^Usage: clipdesk generate video --prompt TEXT /);
    expect((await run(['models', 'extra'])).code).toBe(2);
  });
});
