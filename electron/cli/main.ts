import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { generate, mediaDownload, mediaList, models, providers, upload, usage } from './commands.ts';
import { doctor } from './doctor.ts';
import { generationsCancel, generationsGet, generationsList, generationsWait } from './generations.ts';
import { describeFailure, EXIT, UsageError } from './errors.ts';
import { mcpOptions } from './mcp.ts';
import { processIo } from './io.ts';
import type { CliIo } from './io.ts';
import { openSession, openStores, profileFor } from './session.ts';
import type { GlobalOptions } from './session.ts';

export const HELP = `Usage: clipdesk [--base-url URL] [--data DIR] COMMAND [options]

Commands:
  generate video|image --prompt TEXT [--model M] [--image FILE|URL|ID] [--duration S] [--size L]
                       [--style S] [--routing optimal|cheapest|compatible] [--provider P]
                       [--private] [--out DIR] [--async] [--json]
                       --async: print the generation id (gen_…) and exit; without it the command
                       waits, showing the step, elapsed time and queue position on stderr
  generations get ID [--json]      the generation's status, queue position, items or error
  generations wait ID [--json]     waits until it is final (progress on stderr), prints its items
  generations cancel ID [--json]   cancels it on the service (no charge unless the provider charged)
  generations list [--status S] [--limit N] [--page P] [--json]
  media list [--user me] [--search S] [--model M] [--provider P] [--media video] [--size L]
             [--sort newest|oldest] [--limit N] [--page P] [--json]
  media download ID [--out DIR] [--json]
  upload FILE [--json]        prints the new media item's id (what --image and media download take)
  models [--json]
  providers [--json]
  usage [--json]
  login [--base-url URL]      reads the key from stdin and stores it in the OS keychain
  logout [--base-url URL]
  doctor [--json]             checks Node, ffmpeg, the keychain, folders, the service and the key
  mcp [--profile NAME] [--http [--port N]] [--max-spend USD]
                              an MCP server for AI assistants (stdio; --http: loopback, bearer secret
                              printed at start); see docs/agents.md

Global options:
  --base-url URL   the service (default: the embedded Local engine)
  --data DIR       the data directory (default: the user data directory)
The key comes from CLIPDESK_API_KEY or the keychain. Results go to stdout, progress to stderr.
Waits are never silent: a 429 prints what it waits for and for how long. A service without
asynchronous mode answers generate at once, and --async then behaves like a plain generate.
CLIPDESK_POLL_INTERVAL_MS sets the first wait between polls (default 1000; it grows to 10 s).
On the embedded engine, media are named clipdesk-media:ID (its URLs end with the command).
Exit codes: 0 ok, 2 usage, 3 authentication or permission, 4 rate-limited, 5 other service error, 1 unexpected.
`;

const OPTIONS = {
  'base-url': { type: 'string' },
  data: { type: 'string' },
  prompt: { type: 'string' },
  model: { type: 'string' },
  image: { type: 'string' },
  duration: { type: 'string' },
  size: { type: 'string' },
  style: { type: 'string' },
  routing: { type: 'string' },
  provider: { type: 'string' },
  private: { type: 'boolean' },
  async: { type: 'boolean' },
  status: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  user: { type: 'string' },
  search: { type: 'string' },
  media: { type: 'string' },
  sort: { type: 'string' },
  limit: { type: 'string' },
  page: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  profile: { type: 'string' },
  http: { type: 'boolean' },
  port: { type: 'string' },
  'max-spend': { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** Which flags each command takes (beyond the global ones). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  'generate video': [
    'prompt',
    'model',
    'image',
    'duration',
    'size',
    'style',
    'routing',
    'provider',
    'private',
    'out',
    'async',
    'json',
  ],
  'generate image': ['prompt', 'model', 'size', 'style', 'routing', 'provider', 'private', 'out', 'async', 'json'],
  'generations get': ['json'],
  'generations wait': ['json'],
  'generations cancel': ['json'],
  'generations list': ['status', 'limit', 'page', 'json'],
  'media list': ['user', 'search', 'model', 'provider', 'media', 'size', 'sort', 'limit', 'page', 'json'],
  'media download': ['out', 'json'],
  upload: ['json'],
  models: ['json'],
  providers: ['json'],
  usage: ['json'],
  login: [],
  logout: [],
  doctor: ['json'],
  mcp: ['profile', 'http', 'port', 'max-spend'],
};
const GLOBAL = ['base-url', 'data', 'help'];

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  try {
    let parsed;
    try {
      parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help || positionals.length === 0) {
      (values.help ? io.stdout : io.stderr)(HELP);
      return values.help ? EXIT.ok : EXIT.usage;
    }
    const [command = '', sub, ...rest] = positionals;
    const grouped = command === 'generate' || command === 'media' || command === 'generations';
    const name = grouped ? `${command} ${sub ?? ''}` : command;
    const allowed = ALLOWED[name];
    if (!allowed) throw new UsageError(`Unknown command: ${positionals.slice(0, 2).join(' ')}. Run clipdesk --help.`);
    for (const flag of Object.keys(values)) {
      if (!allowed.includes(flag) && !GLOBAL.includes(flag)) throw new UsageError(`${name} does not take --${flag}`);
    }
    const withId = ['media download', 'generations get', 'generations wait', 'generations cancel'];
    const arg = grouped ? rest[0] : sub;
    const extra = grouped ? rest.slice(withId.includes(name) ? 1 : 0) : rest;
    if (extra.length > 0 || (arg !== undefined && ![...withId, 'upload'].includes(name))) {
      throw new UsageError(`Unexpected argument: ${[arg, ...extra].filter(Boolean).join(' ')}`);
    }
    const global: GlobalOptions = {
      ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
      ...(values.data ? { data: resolve(values.data) } : {}),
    };
    if (global.baseUrl) {
      try {
        const u = new URL(global.baseUrl);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
      } catch {
        throw new UsageError(`--base-url must be an http(s) URL: ${global.baseUrl}`);
      }
    }

    if (name === 'login' || name === 'logout') return await loginOrOut(name, io, global);
    if (name === 'doctor') return await doctor(io, global, { json: values.json === true });
    // Loaded only for `mcp`: the SDK and the app's core are not every command's start-up cost.
    if (name === 'mcp') return await (await import('../mcp/index.ts')).runMcp(mcpOptions(values, global.data), io);

    const session = await openSession(io, global);
    try {
      const flags = values as Record<string, string | boolean | undefined>;
      if (name === 'generate video') await generate(session, io, 'video', flags);
      else if (name === 'generate image') await generate(session, io, 'image', flags);
      else if (name === 'media list') await mediaList(session, io, flags);
      else if (name === 'media download') await mediaDownload(session, io, arg, flags);
      else if (name === 'upload') await upload(session, io, arg, flags);
      else if (name === 'models') await models(session, io, flags);
      else if (name === 'providers') await providers(session, io, flags);
      else if (name === 'usage') await usage(session, io, flags);
      else if (name === 'generations get') await generationsGet(session, io, arg, flags);
      else if (name === 'generations wait') await generationsWait(session, io, arg, flags);
      else if (name === 'generations cancel') await generationsCancel(session, io, arg, flags);
      else if (name === 'generations list') await generationsList(session, io, flags);
    } finally {
      await session.close();
    }
    return EXIT.ok;
  } catch (error) {
    const { code, line } = describeFailure(error);
    io.stderr(`clipdesk: ${line}\n`);
    return code;
  }
}

async function loginOrOut(name: 'login' | 'logout', io: CliIo, global: GlobalOptions): Promise<number> {
  const baseUrl = global.baseUrl ?? io.env['CLIPDESK_BASE_URL'];
  if (!baseUrl) throw new UsageError(`${name} needs --base-url URL (the Local engine needs no key)`);
  const { profiles, secrets } = openStores(io, global);
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
  await profiles.activate(id);
  io.stderr(`Stored the key ending in ${stored.last4 ?? '????'} for ${baseUrl} in the OS keychain\n`);
  return EXIT.ok;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
