/**
 * `clipdesk profiles list|use`: the current profile, the one the app shows as active, `clipdesk
 * mcp` uses, and plain CLI commands use when neither `--base-url` nor `CLIPDESK_BASE_URL` is
 * given (docs/cli.md "Which service").
 */
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import { lookupAppEndpoint } from '../app/app-endpoint.ts';
import type { Profile, ProfileList } from '../../shared/ipc/index.ts';
import { HTTP_IPC, type IpcClient } from '../../shared/ipc/client.ts';
import type { Profiles } from '../core/profiles/index.ts';
import { UsageError } from './errors.ts';
import type { CliIo } from './io.ts';

/** What the Local engine's line shows where a remote one shows its URL. */
const LOCAL_WHERE = 'built-in';

/** The profile a name or id names; an unknown one is a usage error that says how to list them. */
export function findProfile(list: ProfileList, wanted: string): Profile {
  const found =
    list.profiles.find((p) => p.id === wanted) ??
    list.profiles.find((p) => p.name === wanted) ??
    list.profiles.find((p) => p.name.toLowerCase() === wanted.toLowerCase());
  if (!found) throw new UsageError(`No profile named ${wanted} (clipdesk profiles list shows them)`);
  return found;
}

/** `* NAME<TAB>KIND<TAB>URL<TAB>KEY`, the current one starred (docs/cli.md). */
export function profileLines(list: ProfileList): string[] {
  return list.profiles.map((p) => {
    const mark = p.id === list.activeId ? '*' : ' ';
    const where = p.kind === 'local' ? LOCAL_WHERE : p.baseUrl;
    const key = p.kind === 'local' ? 'needs no key' : p.key.hasKey ? `key …${p.key.last4 ?? ''}` : 'no key';
    return `${mark} ${p.name}\t${p.kind}\t${where}\t${key}`;
  });
}

/** What overrides the current profile for this command line, said once on stderr. */
export function overrideNotice(global: { baseUrl?: string }, env: NodeJS.ProcessEnv): string | null {
  if (global.baseUrl) return `--base-url ${global.baseUrl} wins over the current profile for this command`;
  const envUrl = env['CLIPDESK_BASE_URL']?.trim();
  if (envUrl) return `CLIPDESK_BASE_URL=${envUrl} wins over the current profile for commands run with it`;
  return null;
}

export async function profilesList(
  io: CliIo,
  profiles: Profiles,
  global: { baseUrl?: string },
  flags: { json?: boolean },
): Promise<void> {
  const list = await profiles.list();
  if (flags.json) io.stdout(`${JSON.stringify(list, null, 2)}\n`);
  else for (const line of profileLines(list)) io.stdout(`${line}\n`);
  const notice = overrideNotice(global, io.env);
  if (notice) io.stderr(`${notice}\n`);
}

export async function profilesUse(
  io: CliIo,
  stores: { profiles: Profiles; userDataDir: string },
  global: { baseUrl?: string },
  name: string | undefined,
): Promise<void> {
  if (!name) throw new UsageError('profiles use needs a NAME (clipdesk profiles list shows them)');
  const profile = findProfile(await stores.profiles.list(), name);
  const via = await activateProfile(stores, profile.id);
  const where = profile.kind === 'local' ? 'the built-in Local engine' : profile.baseUrl;
  io.stderr(
    `The current profile is now ${profile.name} (${where})${via === 'app' ? ', in the running app too' : ''}\n`,
  );
  const notice = overrideNotice(global, io.env);
  if (notice) io.stderr(`${notice}\n`);
}

/**
 * Makes a profile the current one. When the app runs on this data folder it is asked to (its
 * queue runs the active profile, and it would not see the file change); otherwise the settings
 * file is written, and the app reads it at its next start.
 */
export async function activateProfile(
  stores: { profiles: Profiles; userDataDir: string },
  id: string,
): Promise<'app' | 'file'> {
  const found = lookupAppEndpoint(stores.userDataDir);
  if (found.state === 'live') {
    const { origin, port, secret } = found.endpoint;
    const ipc: IpcClient = createORPCClient(
      new RPCLink({ url: `${origin}${HTTP_IPC.rpcPrefix}`, headers: { cookie: `clipdesk_${port}=${secret}` } }),
    );
    const answered = await ipc.profiles.activate({ id }, { signal: AbortSignal.timeout(5000) }).then(
      () => true,
      () => false,
    );
    if (answered) return 'app';
  }
  await stores.profiles.activate(id);
  return 'file';
}
