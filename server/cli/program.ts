import type { Command } from 'commander';
import { TIER_NAMES } from '../../shared/api/index.ts';
import { createProgram, runProgram, usageLine } from '../../shared/node/cli-program.ts';
import type { CliCommand } from '../../shared/node/cli-program.ts';
import { KeyError } from '../auth/api-keys.ts';
import { LIMIT_FIELDS } from '../limits/account-limits.ts';
import {
  DEFAULT_SHUTDOWN_GRACE_SECONDS,
  keysCreate,
  keysList,
  keysRevoke,
  keysRotateWebhookSecret,
  migrateCommand,
  serve,
  usersSetLimits,
  usersSetTier,
  withDb,
} from './commands.ts';
import type { Io, LocationValues, ServeValues } from './commands.ts';
import { defaultDataDir } from './data-dir.ts';
import { fsckCommand } from './fsck.ts';
import { catalogSyncCommand } from './catalog.ts';
import type { CatalogSyncValues } from './catalog.ts';
import { providersList, providersRemoveKey, providersSetKey } from './providers.ts';
import { exportCommand, importCommand } from './transfer.ts';
import { UsageError } from './usage-error.ts';

export const USAGE = `clipdesk-service — the Media Generation Service v1 (Clipdesk's Local engine)

Usage:
  clipdesk-service serve [--host 127.0.0.1] [--port 8787|0] [--data DIR] [--public-url URL]
                         [--fail-provider SLUG]... [--allow-remote] [--file-url-ttl SECONDS]
                         [--allow-private-image-urls] [--allow-private-webhooks]
                         [--provider-timeout SECONDS] [--shutdown-grace SECONDS] [--no-migrate]
                         [--catalog-sync-interval HOURS]
                         [--database postgres://USER@HOST:PORT/DB [--listen-database URL]
                         [--lease-timeout SECONDS] [--generation-workers N]]
                         [--storage s3://BUCKET/PREFIX [--file-redirects]]
  clipdesk-service migrate [--data DIR] [--database postgres://USER@HOST:PORT/DB]
  clipdesk-service fsck [--data DIR] [--database URL] [--storage URL] [--repair] [--min-age SECONDS]
                         [--force] [--json]
  clipdesk-service export --out BUNDLE_DIR [--data DIR] [--storage URL]
  clipdesk-service import --from BUNDLE_DIR [--database URL] [--storage URL] [--data DIR]
  clipdesk-service keys create --user NAME [--tier ${TIER_NAMES.join('|')}] [--name LABEL]
                         [--permissions read,generate,upload] [--data DIR] [--json]
  clipdesk-service keys list --user NAME [--data DIR] [--json]
  clipdesk-service keys revoke KEY_ID [--data DIR]
  clipdesk-service keys rotate-webhook-secret KEY_ID [--data DIR] [--json]
  clipdesk-service users set-tier NAME TIER [--data DIR]
  clipdesk-service users set-limits NAME [--rpm N] [--rph N] [--rpd N] [--images N] [--videos N]
                         [--storage BYTES] [--retention DAYS] [--data DIR]
  clipdesk-service providers list [--data DIR] [--json]
  clipdesk-service providers set-key NAME [--data DIR]     (reads the key from standard input)
  clipdesk-service providers remove-key NAME [--data DIR]
  clipdesk-service catalog sync [--provider fal|replicate]... [--data DIR] [--database URL] [--dry-run] [--json]
  clipdesk-service --version | COMMAND --help

--data defaults to ${defaultDataDir()}
Every command also takes --database URL (or CLIPDESK_DATABASE_URL; default: SQLite in the data
directory) and --storage URL (or CLIPDESK_STORAGE_URL; default: the data directory on disk).
A postgres://USER@HOST:PORT/DB database lets several serve processes (nodes) share one service;
the database also holds the URL signing secret then. Files go to S3 with s3://BUCKET/PREFIX:
endpoint, region and credentials from the AWS SDK's variables (AWS_REGION, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_PROFILE…) plus CLIPDESK_S3_ENDPOINT for S3-compatible stores (MinIO,
R2). --file-redirects answers file URLs with a 302 to the bucket's presigned URL instead of
streaming them through the service. Nodes share one database and one bucket.
fsck lists stored files no row points at and rows whose files are missing (exit 1 if any);
--repair removes such files older than --min-age (default 3600 s: younger ones may be work in
flight), deletes items none of whose files exist (not when more than half of all items look lost,
a wrong --storage, unless --force) and sets received uploads without their bytes back to pending.
export writes a one-machine service (its SQLite database, every stored file and the URL signing
secret) to a new owner-only bundle directory, from one consistent snapshot; import moves a bundle
into an empty database and store (migrated first), verifying every row count and file sha256, and
commits the rows in one transaction after the files (exit 2 if the target holds data). Provider
keys set with providers set-key are not moved: both say which providers had one.
migrate creates or updates the database's schema and exits; serve does the same at start unless
--no-migrate, which refuses a database that needs migrating. On PostgreSQL that includes the
generation queue's schema (pgboss): generations, synchronous or asynchronous, run on any node,
and a node that stops heartbeating for --lease-timeout seconds (or CLIPDESK_LEASE_TIMEOUT; default
30, at least 10) loses its generations to another; each node runs up to --generation-workers of
each kind at once (default 16; 0: a node that only accepts and answers requests).
--listen-database URL (or CLIPDESK_LISTEN_DATABASE_URL; default: the --database URL): the same
PostgreSQL database through an address that keeps a session (PostgreSQL itself, or PgBouncer in
session mode), for the nodes' LISTEN connections (provider webhooks, queue wake-ups) and their
liveness; needed when --database goes through a pooler in transaction mode.
--allow-private-image-urls lets generations fetch image_url from loopback and private addresses
(refused by default: only public addresses, and this service's own URLs, are used).
--allow-private-webhooks lets generations' webhook_url point at loopback and private addresses
(refused by default).
keys create prints the key on stdout and, once, the key's webhook signing secret (whsec_…) on
stderr, labelled; --json prints both in one object (webhookSecret). Nothing can show a secret
again: keys rotate-webhook-secret makes a new one (the old one stops working) and prints it.
--shutdown-grace: on SIGTERM or SIGINT, serve stops accepting connections and lets requests in
flight finish for up to SECONDS (default ${DEFAULT_SHUTDOWN_GRACE_SECONDS}); then it aborts the rest (asynchronous
generations resume at the next start) and exits 0. A second signal exits at once.
--provider-timeout cancels an AI provider's job at the provider after SECONDS (default 900) and
falls back to the next provider.
The local providers are procedural renderers built on ffmpeg, not AI.
AI providers (fal, replicate, google, runway, luma, openai) need a key: FAL_KEY, REPLICATE_API_TOKEN,
GEMINI_API_KEY, RUNWAYML_API_SECRET, LUMAAI_API_KEY, OPENAI_API_KEY in the environment, or one stored
with providers set-key (owner-only, in the data directory; a stored key wins over the environment).
CLIPDESK_<ID>_BASE_URL (e.g. CLIPDESK_REPLICATE_BASE_URL) points a provider at another http(s) base.
Operators change prices and add models in DATA/catalog.json.
catalog sync reads fal's and Replicate's model listings (and fal's prices) with the keys above and
writes the operator catalog (DATA/catalog.json, or the database on PostgreSQL; the previous one is
kept); a running service reloads it. CLIPDESK_FAL_PLATFORM_URL points at another fal platform API.
serve --catalog-sync-interval HOURS (default 24, 0 = off) syncs on one node at a time, never at start.
`;

/** `--data`, `--database` and (unless `storage: false`) `--storage`: where every command's rows and files are. */
function withLocations<C extends Command>(command: C, { storage = true }: { storage?: boolean } = {}): C {
  command
    .option('--data <DIR>', `the data directory (default: ${defaultDataDir()})`)
    .option('--database <URL>', 'postgres://USER@HOST:PORT/DB, or CLIPDESK_DATABASE_URL (default: SQLite in --data)');
  if (storage)
    command.option('--storage <URL>', 's3://BUCKET/PREFIX, or CLIPDESK_STORAGE_URL (default: --data on disk)');
  return command;
}

/** A command with its usage line, description and the location flags. */
function subcommand(
  parent: CliCommand,
  name: string,
  usage: string,
  description: string,
  locations: { storage?: boolean } = {},
): CliCommand {
  return withLocations(parent.command(name).usage(usage).description(description), locations);
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Wraps a command body into its action: a usage error is said in one line with the command's usage (exit 2). */
type Act = (command: Command, body: (...args: never[]) => Promise<number>) => (...args: unknown[]) => Promise<void>;

function actions(io: Io, done: (code: number) => void): Act {
  return (command, body) =>
    async (...args) => {
      try {
        done(await body(...(args as never[])));
      } catch (error) {
        if (!(error instanceof UsageError || error instanceof KeyError)) throw error;
        io.err(`clipdesk-service: ${error.message}`);
        io.err(usageLine(command));
        done(2);
      }
    };
}

/** The program; every action hands its exit code to `done`. */
function buildProgram(io: Io, signals: { onStop(stop: () => void): void }, done: (code: number) => void): CliCommand {
  const program = createProgram('clipdesk-service', USAGE, {
    out: (text) => io.out(text.replace(/\n$/, '')),
    err: (text) => io.err(text.replace(/\n$/, '')),
  });
  const act = actions(io, done);
  addServeCommand(program, act, io, signals);
  addStorageCommands(program, act, io);
  addKeysCommands(program, act, io);
  addUsersCommands(program, act, io);
  addProvidersCommands(program, act, io);
  addCatalogCommands(program, act, io);
  return program;
}

/** `serve`. */
function addServeCommand(program: CliCommand, act: Act, io: Io, signals: { onStop(stop: () => void): void }): void {
  const serveCommand = subcommand(
    program,
    'serve',
    '[--host 127.0.0.1] [--port 8787|0] [--data DIR] [--public-url URL] [--fail-provider SLUG]... [--allow-remote] [--file-url-ttl SECONDS] [--allow-private-image-urls] [--allow-private-webhooks] [--provider-timeout SECONDS] [--shutdown-grace SECONDS] [--no-migrate] [--catalog-sync-interval HOURS] [--database URL [--listen-database URL] [--lease-timeout SECONDS] [--generation-workers N]] [--storage s3://BUCKET/PREFIX [--file-redirects]]',
    'Runs the service until SIGTERM or SIGINT.',
  )
    .option('--host <HOST>', 'the address to listen on', '127.0.0.1')
    .option('--port <PORT>', 'the port (0: any free one)', '8787')
    .option('--public-url <URL>', 'the address clients use, when a proxy stands in front')
    .option('--fail-provider <SLUG>', 'make a provider fail (tests); repeatable', collect)
    .option('--allow-remote', 'listen on an address other machines reach')
    .option('--file-url-ttl <SECONDS>', 'how long signed file URLs stay valid')
    .option('--allow-private-image-urls', 'let image_url be a loopback or private address')
    .option('--allow-private-webhooks', 'let webhook_url be a loopback or private address')
    .option('--provider-timeout <SECONDS>', "cancel a provider's job after SECONDS (default 900)")
    .option(
      '--shutdown-grace <SECONDS>',
      `how long requests in flight may finish on a stop (default ${DEFAULT_SHUTDOWN_GRACE_SECONDS})`,
    )
    .option('--no-migrate', 'refuse a database that needs migrating instead of migrating it')
    .option('--catalog-sync-interval <HOURS>', 'hours between catalog syncs, on one node (default 24, 0: off)')
    .option('--listen-database <URL>', 'the database through a session-keeping address, for LISTEN')
    .option('--lease-timeout <SECONDS>', "seconds without a heartbeat before a node's generations move (default 30)")
    .option('--generation-workers <N>', 'generations of each kind a node runs at once (default 16)')
    .option('--file-redirects', "answer file URLs with a redirect to the bucket's presigned URL");
  serveCommand.action(act(serveCommand, (values: ServeValues) => serve(values, io, signals)));
}

/** `migrate`, `fsck`, `export` and `import`: the database and the stored files as a whole. */
function addStorageCommands(program: CliCommand, act: Act, io: Io): void {
  const migrate = subcommand(
    program,
    'migrate',
    '[--data DIR] [--database postgres://USER@HOST:PORT/DB]',
    "Creates or updates the database's schema and exits.",
  );
  migrate.action(act(migrate, (values: LocationValues) => migrateCommand(values, io)));

  const fsck = subcommand(
    program,
    'fsck',
    '[--data DIR] [--database URL] [--storage URL] [--repair] [--min-age SECONDS] [--force] [--json]',
    'Lists stored files no row points at and rows whose files are missing (exit 1 if any).',
  )
    .option('--repair', 'remove orphaned files, lost items, and reset uploads without bytes')
    .option('--min-age <SECONDS>', 'leave files younger than this alone (default 3600)')
    .option('--force', 'repair even when more than half of the items look lost')
    .option('--json', 'print one JSON object');
  fsck.action(act(fsck, (values: Parameters<typeof fsckCommand>[0]) => fsckCommand(values, io)));

  const exportC = subcommand(
    program,
    'export',
    '--out BUNDLE_DIR [--data DIR] [--storage URL]',
    'Writes a one-machine service to a new owner-only bundle directory.',
  ).option('--out <BUNDLE_DIR>', 'a new or empty directory');
  exportC.action(act(exportC, (values: LocationValues & { out?: string }) => exportCommand(values, io)));

  const importC = subcommand(
    program,
    'import',
    '--from BUNDLE_DIR [--database URL] [--storage URL] [--data DIR]',
    'Moves a bundle into an empty database and store, verifying every row count and file.',
  ).option('--from <BUNDLE_DIR>', 'what export wrote');
  importC.action(act(importC, (values: LocationValues & { from?: string }) => importCommand(values, io)));
}

/** `keys create|list|revoke|rotate-webhook-secret`. */
function addKeysCommands(program: CliCommand, act: Act, io: Io): void {
  const keys = program
    .command('keys')
    .usage('COMMAND [options]')
    .description('API keys: create, list, revoke, rotate-webhook-secret.');
  const create = subcommand(
    keys,
    'create',
    `--user NAME [--tier ${TIER_NAMES.join('|')}] [--name LABEL] [--permissions read,generate,upload] [--data DIR] [--json]`,
    'Creates a key; prints it on stdout and its webhook signing secret, once, on stderr.',
  )
    .option('--user <NAME>', 'the account (created with its first key)')
    .option('--tier <TIER>', TIER_NAMES.join(', '))
    .option('--name <LABEL>', 'a label for the key')
    .option('--permissions <LIST>', 'read,generate,upload (default: all)')
    .option('--json', 'print the key and its webhook secret in one JSON object');
  create.action(
    act(create, (values: LocationValues & Parameters<typeof keysCreate>[1]) =>
      withDb(values, (db, secret) => keysCreate(db, values, io, secret)),
    ),
  );
  const list = subcommand(keys, 'list', '--user NAME [--data DIR] [--json]', "Lists a user's keys.")
    .option('--user <NAME>', 'the account')
    .option('--json', 'print one JSON array');
  list.action(
    act(list, (values: LocationValues & { user?: string; json?: boolean }) =>
      withDb(values, (db) => keysList(db, values, io)),
    ),
  );
  const revoke = subcommand(keys, 'revoke', 'KEY_ID [--data DIR]', 'Revokes a key.')
    .argument('[KEY_ID]')
    .argumentsSay('keys revoke takes one KEY_ID');
  revoke.action(
    act(revoke, (id: string | undefined, values: LocationValues) => withDb(values, (db) => keysRevoke(db, id, io))),
  );
  const rotate = subcommand(
    keys,
    'rotate-webhook-secret',
    'KEY_ID [--data DIR] [--json]',
    "Makes a key's new webhook signing secret and prints it (the old one stops working).",
  )
    .argument('[KEY_ID]')
    .argumentsSay('keys rotate-webhook-secret takes one KEY_ID')
    .option('--json', 'print one JSON object');
  rotate.action(
    act(rotate, (id: string | undefined, values: LocationValues & { json?: boolean }) =>
      withDb(values, (db, secret) => keysRotateWebhookSecret(db, id, values, io, secret)),
    ),
  );
}

/** `users set-tier|set-limits`. */
function addUsersCommands(program: CliCommand, act: Act, io: Io): void {
  const users = program.command('users').usage('COMMAND [options]').description('Accounts: set-tier, set-limits.');
  const setTier = subcommand(
    users,
    'set-tier',
    'NAME TIER [--data DIR]',
    `Moves a user to a tier: ${TIER_NAMES.join(', ')}.`,
  )
    .argument('[NAME]')
    .argument('[TIER]')
    .argumentsSay('users set-tier takes NAME TIER');
  setTier.action(
    act(setTier, (user: string | undefined, tier: string | undefined, values: LocationValues) =>
      withDb(values, (db) => usersSetTier(db, user, tier, io)),
    ),
  );
  // `users set-limits --storage BYTES` is the account's storage quota (it came first): there the
  // storage location comes from CLIPDESK_STORAGE_URL alone.
  const setLimits = subcommand(
    users,
    'set-limits',
    'NAME [--rpm N] [--rph N] [--rpd N] [--images N] [--videos N] [--storage BYTES] [--retention DAYS] [--data DIR]',
    "Sets an account's own limits over its tier's; the others are kept.",
    { storage: false },
  )
    .argument('[NAME]')
    .argumentsSay('users set-limits takes one NAME');
  for (const f of LIMIT_FIELDS) setLimits.option(`--${f.flag} <N>`, f.what);
  setLimits.action(
    act(setLimits, (user: string | undefined, values: LocationValues & Parameters<typeof usersSetLimits>[2]) =>
      withDb({ data: values.data, database: values.database }, (db) => usersSetLimits(db, user, values, io)),
    ),
  );
}

/** `providers list|set-key|remove-key`. */
function addProvidersCommands(program: CliCommand, act: Act, io: Io): void {
  const providers = program
    .command('providers')
    .usage('COMMAND [options]')
    .description('Provider keys of this service: list, set-key, remove-key.');
  const pList = subcommand(
    providers,
    'list',
    '[--data DIR] [--json]',
    'Lists the providers and where their keys come from.',
  ).option('--json', 'print one JSON object');
  pList.action(act(pList, (values: LocationValues & { json?: boolean }) => providersList(values, io)));
  const pSet = subcommand(
    providers,
    'set-key',
    'NAME [--data DIR]',
    "Stores a provider's key, read from standard input (never argv).",
  )
    .argument('[NAME]')
    .argumentsSay('providers set-key takes one NAME');
  pSet.action(act(pSet, (name: string | undefined, values: LocationValues) => providersSetKey(name, values, io)));
  const pRemove = subcommand(providers, 'remove-key', 'NAME [--data DIR]', "Removes a provider's stored key.")
    .argument('[NAME]')
    .argumentsSay('providers remove-key takes one NAME');
  pRemove.action(
    act(pRemove, (name: string | undefined, values: LocationValues) => providersRemoveKey(name, values, io)),
  );
}

/** `catalog sync`. */
function addCatalogCommands(program: CliCommand, act: Act, io: Io): void {
  const catalog = program.command('catalog').usage('COMMAND [options]').description('The AI model catalog: sync.');
  const cSync = subcommand(
    catalog,
    'sync',
    '[--provider fal|replicate]... [--data DIR] [--database URL] [--dry-run] [--json]',
    "Reads the providers' model listings and prices and writes the operator catalog.",
    { storage: false },
  )
    .option('--provider <NAME>', 'fal or replicate (default: both); repeatable', collect)
    .option('--dry-run', 'read and check, write nothing')
    .option('--json', 'print the sync report as one JSON object');
  cSync.action(act(cSync, (values: CatalogSyncValues) => catalogSyncCommand(values, io)));
}

/** Runs one command; resolves with the exit code. `serve` resolves only when the server stops. */
export async function runCli(argv: string[], io: Io, signals: { onStop(stop: () => void): void }): Promise<number> {
  // No command at all: the usage on stdout, as ever, and exit 2.
  if (argv.length === 0) {
    io.out(USAGE);
    return 2;
  }
  let code = 0;
  try {
    const parsed = await runProgram(
      buildProgram(io, signals, (c) => (code = c)),
      argv,
    );
    return parsed ?? code;
  } catch (error) {
    io.err(`clipdesk-service: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
