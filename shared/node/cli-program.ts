import { readFileSync } from 'node:fs';
import { Command, CommanderError, Help } from 'commander';

/**
 * What both command-line programs (`clipdesk`, `clipdesk-service`) share on top of commander:
 * errors and help written through the program's own output functions (tests inject them), exit
 * codes of their own (2 for any usage error, never commander's 1), and a parser error said in one
 * line, prefixed with the program's name, followed by the command's usage line (docs/cli.md).
 */
export interface ProgramOutput {
  out(text: string): void;
  err(text: string): void;
}

/** Thrown once the parser has written its error (exit 2). */
class ParseFailure extends Error {}

/** The version in package.json: two folders up from the sources and from the bundles in dist/ alike. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/** commander's error text (`error: unknown option '--x'\n(Did you mean --y?)`) as one line. */
function oneLine(message: string): string {
  return message
    .replace(/^error: /, '')
    .split('\n')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ');
}

export class CliCommand extends Command {
  /** What to say for arguments beyond the command's (commander's own words otherwise). */
  private argumentsRule: string | null = null;

  /** `keys revoke takes one KEY_ID`: said for too many arguments, as the command says for too few. */
  argumentsSay(rule: string): this {
    this.argumentsRule = rule;
    return this;
  }
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  /** A parser error (unknown command or flag, missing value, extra argument): one line, then the usage. */
  override error(message: string, options?: { code?: string }): never {
    const output = this.configureOutput();
    const said = options?.code === 'commander.excessArguments' && this.argumentsRule ? this.argumentsRule : message;
    output.writeErr?.(`${rootOf(this).name()}: ${oneLine(said)}\n${usageLine(this)}\n`);
    throw new ParseFailure(message);
  }
}

/** `Usage: clipdesk-service keys create --user NAME …`: the command's synopsis line. */
export function usageLine(command: Command): string {
  return `Usage: ${new Help().commandUsage(command)}`;
}

function rootOf(command: Command): Command {
  let c = command;
  while (c.parent) c = c.parent;
  return c;
}

/**
 * A program: `--version`, `-h/--help` on every command, suggestions for mistyped commands and
 * flags (commander's), help on stdout and errors on stderr through `output`.
 */
export function createProgram(name: string, topLevelHelp: string, output: ProgramOutput): CliCommand {
  const program = new CliCommand(name);
  const commandHelp = new Help();
  program
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'print the help of a command')
    .configureOutput({ writeOut: (text) => output.out(text), writeErr: (text) => output.err(text) })
    .configureHelp({
      showGlobalOptions: true,
      formatHelp: (cmd, helper) => (cmd === program ? topLevelHelp : commandHelp.formatHelp(cmd, helper)),
    })
    .exitOverride();
  return program;
}

/**
 * Parses and runs; resolves with the exit code for what the parser itself answered (help, version,
 * a usage error), or `null` when a command's action ran (its code is the caller's). Anything an
 * action throws is rethrown.
 */
export async function runProgram(program: Command, argv: readonly string[]): Promise<number | null> {
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return null;
  } catch (error) {
    if (error instanceof ParseFailure) return 2;
    if (error instanceof CommanderError) {
      // Help and --version asked for: 0. Help shown because a command was missing: a usage error.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return 0;
      if (error.code === 'commander.help') return error.exitCode === 0 ? 0 : 2;
      return 2;
    }
    throw error;
  }
}
