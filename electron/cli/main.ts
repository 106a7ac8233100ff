import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createProgram, runProgram } from '../../shared/node/cli-program.ts';
import type { CliCommand } from '../../shared/node/cli-program.ts';
import { generate, mediaDownload, mediaList, models, providers, upload, usage } from './commands.ts';
import { doctor } from './doctor.ts';
import { generationsCancel, generationsGet, generationsList, generationsWait } from './generations.ts';
import { describeFailure, EXIT, UsageError } from './errors.ts';
import { mcpClientConfig, mcpOptions } from './mcp.ts';
import { activateProfile, profilesList, profilesUse } from './profiles.ts';
import { mcpProfileFromEnv } from './service-choice.ts';
import { processIo } from './io.ts';
import type { CliIo } from './io.ts';
import { openSession, openStores, profileFor } from './session.ts';
import { providersSetKey, sayUnreadableKeyFile } from './provider-keys.ts';
import { createFileLogger } from '../../shared/node/logger.ts';
import type { GlobalOptions, Session } from './session.ts';

export const HELP = `Usage: clipdesk [--base-url URL] [--data DIR] COMMAND [options]

Commands:
  generate video|image --prompt TEXT [--model M] [--image FILE|URL|ID [--end-image FILE|URL|ID]]
                       [--duration S] [--size L] [--style S] [--routing optimal|cheapest|compatible]
                       [--provider P] [--private] [--out DIR [--library-layout]] [--async] [--json]
                       --async: print the generation id (gen_…) and exit; without it the command
                       waits, showing the step, elapsed time and queue position on stderr
  generations get ID [--json]      the generation's status, queue position, items or error
  generations wait ID [--json]     waits until it is final (progress on stderr), prints its items
  generations cancel ID [--json]   cancels it on the service (no charge unless the provider charged)
  generations list [--status S] [--limit N] [--page P] [--json]
  media list [--user me] [--search S] [--model M] [--provider P] [--media video] [--size L]
             [--sort newest|oldest] [--limit N] [--page P] [--json]
  media download ID [--out DIR [--library-layout]] [--json]
  upload FILE [--json]        prints the new media item's id (what --image and media download take)
  models [--json]
  providers [--json]
  providers set-key NAME      reads a provider key (fal, replicate, google, runway, luma, openai)
                              from stdin and stores it for the built-in engine
  usage [--json]
  login [--base-url URL]      reads the key from stdin, stores it (OS keychain or --key-store file)
                              and makes that service the current profile
  logout [--base-url URL]
  profiles list [--json]      the profiles; * marks the current one (the app's active profile)
  profiles use NAME           makes NAME the current profile for the app, the CLI and mcp
  doctor [--json]             checks Node, ffmpeg, the keychain, folders, the service and the key
  mcp [--profile NAME] [--http [--port N]] [--max-spend USD]
                              an MCP server for AI assistants (stdio; --http: loopback, bearer secret
                              printed at start); see docs/agents.md
  mcp --print-config claude|cursor|vscode [--profile NAME] [--max-spend USD]
                              prints that client's configuration, with absolute paths

Global options:
  --base-url URL   the service (default: CLIPDESK_BASE_URL, else the current profile, at first
                   the embedded Local engine)
  --data DIR       the data directory (default: the user data directory)
  --key-store keychain|file
                   where keys are stored (default CLIPDESK_KEY_STORE, else the store last chosen
                   for the data directory, else the OS keychain); a choice is remembered until
                   another is made; file: DATA/keys.json, owner-only, encrypted with
                   CLIPDESK_KEY_PASSPHRASE when it is set, else kept in plain text (with a warning)
  -V, --version    prints the version; COMMAND --help prints a command's help
--out DIR writes the file into DIR itself; without --out, or with --library-layout, files go
into YEAR-MONTH/MODEL/ folders, as the app's library lays them out.
The key comes from CLIPDESK_API_KEY or the key store. Results go to stdout, progress to stderr.
Waits are never silent: a 429 prints what it waits for and for how long. A service without
asynchronous mode answers generate at once, and --async then behaves like a plain generate.
CLIPDESK_POLL_INTERVAL_MS sets the first wait between polls (default 1000; it grows to 10 s).
On the embedded engine, media are named clipdesk-media:ID (its URLs end with the command).
Exit codes: 0 ok, 2 usage, 3 authentication or permission, 4 rate-limited, 5 other service error, 1 unexpected.
`;

/** Every flag a command may take: its commander spelling and its help line. */
const FLAGS = {
  prompt: ['--prompt <TEXT>', 'what to generate'],
  model: ['--model <M>', 'the model (clipdesk models lists them; default: the first of its kind)'],
  image: ['--image <FILE|URL|ID>', 'a start image: a file (uploaded), an http(s) URL or a media id'],
  endImage: [
    '--end-image <FILE|URL|ID>',
    'an end frame, as --image gives the start (with --image; models whose parameters name end_image_url)',
  ],
  duration: ['--duration <S>', 'seconds of video'],
  size: ['--size <L>', 'a size the model lists (360p, 1024x1024…)'],
  style: ['--style <S>', 'a style the model lists'],
  routing: ['--routing <MODE>', 'optimal, cheapest or compatible'],
  provider: ['--provider <P>', 'a provider of the model (its slug or id)'],
  private: ['--private', 'keep the item out of public listings'],
  out: ['--out <DIR>', "write the file into DIR (default: the app's library)"],
  libraryLayout: ['--library-layout', "with --out: lay files out as the app's library does (YYYY-MM/MODEL/…)"],
  async: ['--async', 'print the generation id (gen_…) and exit instead of waiting'],
  json: ['--json', 'print one JSON object'],
  status: ['--status <S>', 'only generations in this status'],
  user: ['--user <me>', 'only your own items'],
  search: ['--search <S>', 'words in the prompt'],
  media: ['--media <KIND>', 'video or image'],
  sort: ['--sort <ORDER>', 'newest or oldest'],
  limit: ['--limit <N>', 'items per page'],
  page: ['--page <P>', 'the page, from 1'],
} as const satisfies Record<string, readonly [string, string]>;
type FlagName = keyof typeof FLAGS;
const FLAG_NAMES = Object.keys(FLAGS) as FlagName[];

type Flags = Record<string, string | boolean | undefined>;
/** A command's body: what it does once its flags are parsed. */
type Run = (session: Session, io: CliIo, flags: Flags, arg: string | undefined) => Promise<void>;

interface CommandSpec {
  /** `['generate', 'video']` for a subcommand of a group. */
  path: readonly [string] | readonly [string, string];
  usage: string;
  description: string;
  arg?: string;
  flags: readonly FlagName[];
  run: Run;
}

const GENERATE_FLAGS = [
  'prompt',
  'model',
  'size',
  'style',
  'routing',
  'provider',
  'private',
  'out',
  'libraryLayout',
  'async',
  'json',
] as const;

/** `generations get|wait|cancel ID [--json]`. */
const GENERATION_ID_COMMANDS: readonly CommandSpec[] = (
  [
    ['get', "The generation's status, queue position, items or error.", generationsGet],
    ['wait', 'Waits until the generation is final (progress on stderr); prints its items.', generationsWait],
    ['cancel', 'Cancels the generation on the service (no charge unless the provider charged).', generationsCancel],
  ] as const
).map(([sub, description, run]) => ({
  path: ['generations', sub],
  usage: 'ID [--json]',
  description,
  arg: '[ID]',
  flags: ['json'],
  run: (s: Session, io: CliIo, flags: Flags, id: string | undefined) => run(s, io, id, flags),
}));

const COMMANDS: readonly CommandSpec[] = [
  {
    path: ['generate', 'video'],
    usage:
      '--prompt TEXT [--model M] [--image FILE|URL|ID [--end-image FILE|URL|ID]] [--duration S] [--size L] [--style S] [--routing optimal|cheapest|compatible] [--provider P] [--private] [--out DIR [--library-layout]] [--async] [--json]',
    description:
      'Generates a video and downloads it; prints its path. Waits, showing the step, elapsed time and queue position on stderr (--async: prints the id and exits).',
    flags: [...GENERATE_FLAGS, 'image', 'endImage', 'duration'],
    run: (s, io, flags) => generate(s, io, 'video', flags),
  },
  {
    path: ['generate', 'image'],
    usage:
      '--prompt TEXT [--model M] [--size L] [--style S] [--routing optimal|cheapest|compatible] [--provider P] [--private] [--out DIR [--library-layout]] [--async] [--json]',
    description: 'Generates an image and downloads it; prints its path.',
    flags: GENERATE_FLAGS,
    run: (s, io, flags) => generate(s, io, 'image', flags),
  },
  ...GENERATION_ID_COMMANDS,
  {
    path: ['generations', 'list'],
    usage: '[--status S] [--limit N] [--page P] [--json]',
    description: 'Your generations, newest first.',
    flags: ['status', 'limit', 'page', 'json'],
    run: (s, io, flags) => generationsList(s, io, flags),
  },
  {
    path: ['media', 'list'],
    usage:
      '[--user me] [--search S] [--model M] [--provider P] [--media video] [--size L] [--sort newest|oldest] [--limit N] [--page P] [--json]',
    description: 'Lists media items: id, date, kind, model, provider, size, duration, prompt.',
    flags: ['user', 'search', 'model', 'provider', 'media', 'size', 'sort', 'limit', 'page', 'json'],
    run: (s, io, flags) => mediaList(s, io, flags),
  },
  {
    path: ['media', 'download'],
    usage: 'ID [--out DIR [--library-layout]] [--json]',
    description: 'Downloads a media item with its sidecar; prints its path.',
    arg: '[ID]',
    flags: ['out', 'libraryLayout', 'json'],
    run: (s, io, flags, id) => mediaDownload(s, io, id, flags),
  },
  {
    path: ['upload'],
    usage: 'FILE [--json]',
    description: "Uploads a file; prints the new media item's id (what --image and media download take).",
    arg: '[FILE]',
    flags: ['json'],
    run: (s, io, flags, file) => upload(s, io, file, flags),
  },
  {
    path: ['models'],
    usage: '[--json]',
    description: 'Lists the models with their providers and prices.',
    flags: ['json'],
    run: (s, io, flags) => models(s, io, flags),
  },
  {
    path: ['providers'],
    usage: '[--json]',
    description: "Lists the service's providers and their status.",
    flags: ['json'],
    run: (s, io, flags) => providers(s, io, flags),
  },
  {
    path: ['usage'],
    usage: '[--json]',
    description: 'Your tier, requests, running generations, storage and cost.',
    flags: ['json'],
    run: (s, io, flags) => usage(s, io, flags),
  },
];

const GROUPS: Readonly<Record<string, string>> = {
  generate: 'Generates a video or an image.',
  generations: 'Asynchronous generations: get, wait, cancel, list.',
  media: 'Media items: list, download.',
  profiles: 'The service profiles: list, use.',
};

/** The parsed global options, checked. */
function globalOptions(values: { baseUrl?: string; data?: string; keyStore?: string }): GlobalOptions {
  const global: GlobalOptions = {
    ...(values.baseUrl ? { baseUrl: values.baseUrl } : {}),
    ...(values.data ? { data: resolve(values.data) } : {}),
    ...(values.keyStore ? { keyStore: values.keyStore } : {}),
  };
  if (global.baseUrl) {
    try {
      const u = new URL(global.baseUrl);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
    } catch {
      throw new UsageError(`--base-url must be an http(s) URL: ${global.baseUrl}`);
    }
  }
  return global;
}

/** A command's parsed flags and the global options, as its action receives them. */
function parsedOf(command: Command): { global: GlobalOptions; flags: Flags } {
  const { baseUrl, data, keyStore, ...flags } = command.optsWithGlobals<
    { baseUrl?: string; data?: string; keyStore?: string } & Flags
  >();
  return { global: globalOptions({ baseUrl, data, keyStore }), flags };
}

/**
 * The `clipdesk` program: commander parses and answers --help/--version; each action records the
 * exit code of the command it ran.
 */
function buildProgram(io: CliIo, done: (code: number) => void): CliCommand {
  const program = createProgram('clipdesk', HELP, { out: io.stdout, err: io.stderr });
  program
    .usage('[--base-url URL] [--data DIR] COMMAND [options]')
    .option('--base-url <URL>', 'the service (default: CLIPDESK_BASE_URL, else the current profile)')
    .option('--data <DIR>', 'the data directory (default: the user data directory)')
    .option(
      '--key-store <STORE>',
      'where keys are stored: keychain or file (default CLIPDESK_KEY_STORE, else the one last chosen, else the OS keychain)',
    );
  const groups = new Map<string, Command>();
  const created = new Map<string, Command>();
  for (const spec of COMMANDS) {
    const [first, second] = spec.path;
    let parent: Command = program;
    if (second !== undefined) {
      parent =
        groups.get(first) ??
        program
          .command(first)
          .usage('COMMAND [options]')
          .description(GROUPS[first] ?? '');
      groups.set(first, parent);
    }
    const command = parent
      .command(second ?? first)
      .usage(spec.usage)
      .description(spec.description);
    if (spec.arg) command.argument(spec.arg);
    // In the order of FLAGS, the same in every command's help.
    for (const flag of FLAG_NAMES.filter((f) => spec.flags.includes(f))) command.option(FLAGS[flag][0], FLAGS[flag][1]);
    created.set(spec.path.join(' '), command);
    command.action(async (...args: unknown[]) => {
      const self = args.at(-1) as Command;
      const { global, flags } = parsedOf(self);
      const arg = spec.arg ? (args[0] as string | undefined) : undefined;
      const session = await openSession(io, global);
      try {
        await sayUnreadableKeyFile(session.secrets, io);
        await spec.run(session, io, flags, arg);
      } finally {
        await session.close();
      }
      done(EXIT.ok);
    });
  }
  for (const name of ['login', 'logout'] as const) {
    program
      .command(name)
      .usage('[--base-url URL]')
      .description(
        name === 'login'
          ? 'Reads the API key of the --base-url service from stdin and stores it in the OS keychain.'
          : 'Removes the stored key of the --base-url service.',
      )
      .action(async (_options: unknown, self: Command) => done(await loginOrOut(name, io, parsedOf(self).global)));
  }
  program
    .command('doctor')
    .usage('[--json]')
    .description('Checks Node, ffmpeg, the keychain, folders, the service and the key; prints the log file.')
    .option(FLAGS.json[0], FLAGS.json[1])
    .action(async (options: { json?: boolean }, self: Command) =>
      done(await doctor(io, parsedOf(self).global, { json: options.json === true })),
    );
  created
    .get('providers')
    ?.command('set-key')
    .usage('NAME')
    .description(
      'Reads a provider key (fal, replicate, google, runway, luma, openai) from stdin and stores it for the built-in engine.',
    )
    .argument('[NAME]')
    .action(async (name: string | undefined, _options: unknown, self: Command) =>
      done(await setKey(io, parsedOf(self).global, name)),
    );
  program
    .command('mcp')
    .usage('[--profile NAME] [--http [--port N]] [--max-spend USD] [--print-config claude|cursor|vscode]')
    .description(
      'An MCP server for AI assistants: stdio, or with --http Streamable HTTP on loopback with a bearer secret printed at start (docs/agents.md).',
    )
    .option('--profile <NAME>', "the profile to use (default: the app's active profile)")
    .option('--http', 'serve Streamable HTTP on 127.0.0.1 instead of stdio')
    .option('--port <N>', 'with --http: the port (default: a free one)')
    .option('--max-spend <USD>', "refuse generations past this spend in this server's session")
    .option('--print-config <CLIENT>', "print claude's, cursor's or vscode's configuration for this server")
    .action(async (options: McpFlags, self: Command) => {
      const { global } = parsedOf(self);
      const flags = {
        'base-url': global.baseUrl,
        profile: options.profile,
        http: options.http,
        port: options.port,
        'max-spend': options.maxSpend,
      };
      if (options.printConfig !== undefined) {
        io.stdout(`${JSON.stringify(mcpClientConfig(options.printConfig, flags, global.data), null, 2)}\n`);
        return done(EXIT.ok);
      }
      // --profile, else CLIPDESK_BASE_URL's profile, else the current one (service-choice.ts).
      if (options.profile === undefined && io.env['CLIPDESK_BASE_URL']?.trim())
        flags.profile = (await mcpProfileFromEnv(openStores(io, global).profiles, io.env)) ?? undefined;
      // Loaded only for `mcp`: the SDK and the app's core are not every command's start-up cost.
      const { runMcp } = await import('../mcp/index.ts');
      done(await runMcp(mcpOptions(flags, global.data, global.keyStore), io));
    });
  addProfilesCommands(program, io, done);
  return program;
}

type McpFlags = { profile?: string; http?: boolean; port?: string; maxSpend?: string; printConfig?: string };

/** `profiles list|use`: the settings file (or the running app), no service needed. */
function addProfilesCommands(program: CliCommand, io: CliIo, done: (code: number) => void): void {
  const group = program.command('profiles').usage('COMMAND [options]').description(GROUPS['profiles']!);
  group
    .command('list')
    .usage('[--json]')
    .description('Lists the profiles; * marks the current one, which the app, the CLI and mcp use.')
    .option(FLAGS.json[0], FLAGS.json[1])
    .action(async (options: { json?: boolean }, self: Command) => {
      const { global } = parsedOf(self);
      await profilesList(io, openStores(io, global).profiles, global, { json: options.json === true });
      done(EXIT.ok);
    });
  group
    .command('use')
    .usage('NAME')
    .description('Makes NAME (a profile name or id) the current profile for the app, the CLI and mcp.')
    .argument('[NAME]')
    .action(async (name: string | undefined, _options: unknown, self: Command) => {
      const { global } = parsedOf(self);
      await profilesUse(io, openStores(io, global), global, name);
      done(EXIT.ok);
    });
}

/** The flags that take a value (`--out DIR`), the global ones included. */
const VALUE_FLAGS = new Set([
  '--base-url',
  '--data',
  '--key-store',
  '--profile',
  '--port',
  '--max-spend',
  '--print-config',
  ...Object.values(FLAGS)
    .filter(([spelling]) => spelling.includes('<'))
    .map(([spelling]) => spelling.split(' ')[0]!),
]);

/** Subcommands of commands that also run on their own (`clipdesk providers` and `providers set-key`). */
function isSubcommand(command: string, word: string): boolean {
  return command === 'providers' && word === 'set-key';
}

/**
 * The command's words first: `clipdesk --json doctor` and `clipdesk --data D generate --prompt P
 * video` have always worked (flags anywhere), while commander finds a command only before the
 * first flag it does not know.
 */
export function commandFirst(argv: readonly string[]): string[] {
  const words: number[] = [];
  for (let i = 0; i < argv.length && words.length < 2; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    if (arg.startsWith('-')) {
      if (VALUE_FLAGS.has(arg)) i++;
      continue;
    }
    if (words.length === 1 && !Object.hasOwn(GROUPS, argv[words[0]!]!) && !isSubcommand(argv[words[0]!]!, arg)) break;
    words.push(i);
  }
  return [...words.map((i) => argv[i]!), ...argv.filter((_, i) => !words.includes(i))];
}

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  try {
    const parsed = await runProgram(
      buildProgram(io, (c) => (code = c)),
      commandFirst(argv),
    );
    return parsed ?? code;
  } catch (error) {
    const { code: failed, line } = describeFailure(error);
    io.stderr(`clipdesk: ${line}\n`);
    return failed;
  }
}

async function setKey(io: CliIo, global: GlobalOptions, name: string | undefined): Promise<number> {
  const stores = openStores(io, global);
  const log = createFileLogger({ dataDir: stores.userDataDir, program: 'cli' });
  try {
    await providersSetKey(io, stores, name, log.logger);
  } finally {
    await log.close();
  }
  return EXIT.ok;
}

async function loginOrOut(name: 'login' | 'logout', io: CliIo, global: GlobalOptions): Promise<number> {
  const baseUrl = global.baseUrl ?? io.env['CLIPDESK_BASE_URL'];
  if (!baseUrl) throw new UsageError(`${name} needs --base-url URL (the Local engine needs no key)`);
  const { profiles, secrets, userDataDir } = openStores(io, global);
  const id = await profileFor(profiles, baseUrl);
  if (name === 'logout') {
    const status = await profiles.removeKey(id);
    io.stderr(`Removed the key for ${baseUrl}${status.backend === 'none' ? ' (no keychain was available)' : ''}\n`);
    return EXIT.ok;
  }
  const key = (await io.readStdin()).trim();
  if (!key) throw new UsageError('login reads the API key from stdin; nothing was given');
  const status = await secrets.status();
  if (!status.available) {
    io.stderr(`clipdesk: ${status.message}\n`);
    return EXIT.unexpected;
  }
  const stored = await profiles.setKey(id, key);
  await activateProfile({ profiles, userDataDir }, id);
  const where = status.backend === 'file' ? 'the key file' : 'the OS keychain';
  io.stderr(`Stored the key ending in ${stored.last4 ?? '????'} for ${baseUrl} in ${where}\n`);
  return EXIT.ok;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
