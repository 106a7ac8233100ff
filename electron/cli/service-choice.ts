import type { Profiles } from '../core/profiles/index.ts';
import { LOCAL_PROFILE_ID } from '../core/profiles/index.ts';
import { UsageError } from './errors.ts';

/**
 * Which service a command talks to (docs/cli.md "Which service"): `--base-url`, else
 * `CLIPDESK_BASE_URL`, else the current profile, the one the app shows as active and `clipdesk
 * mcp` uses (`clipdesk profiles use NAME` changes it for all three).
 */
export type ServiceChoice =
  | {
      kind: 'remote';
      /** Normalised: no trailing slash. */
      baseUrl: string;
      /** The remote profile of that URL, whose stored key is used; null when none has it. */
      profileId: string | null;
      /** Where the choice came from, for messages (`doctor`). */
      from: '--base-url' | 'CLIPDESK_BASE_URL' | 'profile';
    }
  | { kind: 'local'; profileId: typeof LOCAL_PROFILE_ID; from: 'profile' };

/** An http(s) URL without a trailing slash, or a usage error naming where it came from. */
function normalUrl(url: string, from: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UsageError(`${from} must be an http(s) URL: ${url}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`${from} must be an http(s) URL: ${url}`);
  return u.href.replace(/\/+$/, '');
}

export async function chooseService(
  profiles: Profiles,
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<ServiceChoice> {
  const envUrl = env['CLIPDESK_BASE_URL']?.trim();
  const given = flag
    ? { url: flag, from: '--base-url' as const }
    : envUrl
      ? { url: envUrl, from: 'CLIPDESK_BASE_URL' as const }
      : null;
  if (given) {
    const baseUrl = normalUrl(given.url, given.from);
    const { profiles: list } = await profiles.list();
    const profile = list.find((p) => p.kind === 'remote' && p.baseUrl === baseUrl);
    return { kind: 'remote', baseUrl, profileId: profile?.id ?? null, from: given.from };
  }
  const local = { kind: 'local', profileId: LOCAL_PROFILE_ID, from: 'profile' } as const;
  const activeId = profiles.activeId();
  // The Local engine needs no key: the key store is not opened for it.
  if (activeId === LOCAL_PROFILE_ID) return local;
  // A removed profile leaves none active: the Local engine, as the app falls back to it.
  const current = await profiles.get(activeId).catch(() => null);
  if (current?.kind !== 'remote') return local;
  return { kind: 'remote', baseUrl: current.baseUrl, profileId: current.id, from: 'profile' };
}

/**
 * `clipdesk mcp` without `--profile`: the profile of `CLIPDESK_BASE_URL` when it is set (the same
 * order as every other command), else null (the current profile). mcp runs the app's core, which
 * reaches services through profiles, so a URL no profile has is refused with the way to add one.
 */
export async function mcpProfileFromEnv(profiles: Profiles, env: NodeJS.ProcessEnv): Promise<string | null> {
  const choice = await chooseService(profiles, undefined, env);
  if (choice.from !== 'CLIPDESK_BASE_URL') return null;
  if (choice.kind === 'remote' && choice.profileId === null)
    throw new UsageError(
      `CLIPDESK_BASE_URL=${choice.baseUrl} is no profile's service; run clipdesk login --base-url ${choice.baseUrl} first, or unset it`,
    );
  return choice.profileId;
}
