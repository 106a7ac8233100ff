import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ffmpegPath, ffprobePath, versionText } from '../../shared/node/ffmpeg.ts';
import { logFilePath } from '../../shared/node/log-path.ts';
import { isServiceError } from '../core/api/index.ts';
import { defaultEngineDataDir } from '../core/settings/index.ts';
import { ENGINE_KEY_FILE } from '../core/engine/index.ts';
import type { FolderOwner } from '../../shared/node/data-folder-lock.ts';
import type { EngineProviders } from '../core/providers/index.ts';
import type { SecretStoreStatus } from '../core/secrets/index.ts';
import { keySourceText } from './provider-keys.ts';
import { EXIT } from './errors.ts';
import type { CliIo } from './io.ts';
import { openSession, openStores } from './session.ts';
import type { GlobalOptions } from './session.ts';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: CheckStatus;
  detail: string;
}

/** The Node range of package.json's `engines`: type stripping without a flag. */
const MIN_NODE: readonly [number, number] = [22, 18];
/** Below this much free space a folder is worth a warning (a 1080p clip is tens of MB). */
const LOW_SPACE_BYTES = 1 << 30;
const VERSION_TIMEOUT_MS = 10_000;

/**
 * `clipdesk doctor`: what this machine gives the app, one line per check, in the order a problem
 * would be looked for. A failure (something the app cannot work without) makes the exit code 1;
 * a warning does not.
 */
export async function doctor(io: CliIo, global: GlobalOptions, flags: { json?: boolean }): Promise<number> {
  const { userDataDir, secrets, profiles } = openStores(io, global);
  const settings = profiles.settings();
  const checks: Check[] = [nodeCheck(process.versions.node)];

  const ffmpeg = await binaryVersion('ffmpeg', settings.ffmpegPath ?? ffmpegPath());
  const ffprobe = await binaryVersion('ffprobe', ffprobePath());
  checks.push(ffmpeg.check, ffprobe.check);
  if (ffmpeg.major !== null && ffprobe.major !== null && ffmpeg.major !== ffprobe.major) {
    checks.push({
      name: 'ffmpeg/ffprobe',
      status: 'warn',
      detail: `ffmpeg is major version ${ffmpeg.major} but ffprobe is ${ffprobe.major}; use one build of both`,
    });
  }

  const keychain = await secrets.status();
  // A key file kept plainly is the user's choice, but one worth a warning every time it is checked.
  const plainFile = keychain.backend === 'file' && keychain.message.startsWith('Warning');
  checks.push({
    name: 'keychain',
    status: keychain.available && !plainFile ? 'ok' : 'warn',
    detail: `${keychain.backend}: ${keychain.message}`,
  });

  const remote = global.baseUrl ?? io.env['CLIPDESK_BASE_URL'];
  checks.push(await folderCheck('data', userDataDir));
  if (!remote) checks.push(await folderCheck('engine data', defaultEngineDataDir(userDataDir)));
  checks.push(await folderCheck('downloads', settings.downloadDir));
  checks.push(...(await serviceChecks(io, global, remote, keychain)));
  // This CLI's own log, then the app's (the app and its engine write app.log; docs/cli.md).
  checks.push({ name: 'log file', status: 'ok', detail: logFilePath(userDataDir, 'cli') });
  checks.push({ name: 'app log file', status: 'ok', detail: logFilePath(userDataDir, 'app') });

  const failed = checks.some((c) => c.status === 'fail');
  if (flags.json) io.stdout(`${JSON.stringify({ ok: !failed, checks }, null, 2)}\n`);
  else for (const c of checks) io.stdout(`${c.status.padEnd(4)}  ${c.name.padEnd(14)}  ${c.detail}\n`);
  return failed ? EXIT.unexpected : EXIT.ok;
}

function nodeCheck(version: string): Check {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const enough = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return {
    name: 'node',
    status: enough ? 'ok' : 'fail',
    detail: enough ? `v${version}` : `v${version}; Clipdesk needs Node ${MIN_NODE.join('.')} or newer`,
  };
}

/**
 * The major version of an ffmpeg build from its `-version` text: the release number when it has
 * one (`ffmpeg version 6.1.1`, `n7.0`), else the release that its libavutil major ships with
 * (git builds print `N-47683-g…`), else null.
 */
export function ffmpegMajor(text: string): number | null {
  const release = /version n?(\d+)\.\d/.exec(text);
  if (release) return Number(release[1]);
  const avutil = /libavutil\s+(\d+)\./.exec(text);
  if (!avutil) return null;
  const LIBAVUTIL_TO_RELEASE: Record<number, number> = { 55: 3, 56: 4, 57: 5, 58: 6, 59: 7, 60: 8 };
  return LIBAVUTIL_TO_RELEASE[Number(avutil[1])] ?? null;
}

async function binaryVersion(name: string, path: string): Promise<{ check: Check; major: number | null }> {
  const text = await versionText(path, VERSION_TIMEOUT_MS).catch((error: unknown) =>
    error instanceof Error ? error : new Error(String(error)),
  );
  if (text instanceof Error) {
    return { check: { name, status: 'fail', detail: `cannot run ${path}: ${text.message}` }, major: null };
  }
  const version = /version (\S+)/.exec(text)?.[1] ?? 'unknown version';
  const major = ffmpegMajor(text);
  const shown = major === null || version.startsWith(`${major}`) ? version : `${version} (${major}.x)`;
  return { check: { name, status: 'ok', detail: `${shown} at ${path}` }, major };
}

async function folderCheck(name: string, dir: string): Promise<Check> {
  // A folder the app creates on first use may not exist yet: the space is measured where it will be.
  let existing = dir;
  let exists = true;
  for (;;) {
    try {
      await access(existing);
      break;
    } catch {
      exists = false;
      if (dirname(existing) === existing) break;
      existing = dirname(existing);
    }
  }
  try {
    await access(existing, constants.W_OK);
  } catch {
    return { name, status: 'fail', detail: `${dir}: ${existing} is not writable` };
  }
  const fs = await statfs(existing);
  const free = fs.bavail * fs.bsize;
  return {
    name,
    status: free < LOW_SPACE_BYTES ? 'warn' : 'ok',
    detail: `${dir}${exists ? '' : ' (created on first use)'}, ${formatBytes(free)} free`,
  };
}

function formatBytes(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)} GB`;
  return `${(n / 1e6).toFixed(0)} MB`;
}

/** Reaches the service with the key the CLI would use: GET /usage answers both questions. */
async function serviceChecks(
  io: CliIo,
  global: GlobalOptions,
  remote: string | undefined,
  store: SecretStoreStatus,
): Promise<Check[]> {
  const where = remote ?? 'the embedded Local engine';
  let session;
  try {
    session = await openSession(io, global);
  } catch (error) {
    return [{ name: 'service', status: 'fail', detail: `${where} did not start: ${firstLine(error)}` }];
  }
  try {
    const keySource = io.env['CLIPDESK_API_KEY']?.trim()
      ? 'CLIPDESK_API_KEY'
      : session.engine
        ? `the engine's own key (${engineKeyPlace(session.engine.keyStorage, store)})`
        : store.backend === 'file'
          ? 'the key file'
          : 'the keychain';
    const owner = session.engine?.owner ?? null;
    const providerKeys = !session.engine
      ? []
      : owner
        ? [ownerProviderKeysCheck(owner)]
        : [await providerKeysCheck(session.engine.providers, store)];
    const served = owner ? `, run by ${owner.program}, pid ${owner.pid}` : '';
    try {
      const usage = await session.api.getUsage();
      return [
        { name: 'service', status: 'ok', detail: `${remote ?? session.engine?.url} answers (${where}${served})` },
        {
          name: 'key',
          status: 'ok',
          detail: `accepted, from ${keySource}; tier ${usage.tier ?? 'not reported by the service'}`,
        },
        ...providerKeys,
      ];
    } catch (error) {
      if (isServiceError(error) && (error.code === 'authentication_error' || error.code === 'permission_error')) {
        return [
          { name: 'service', status: 'ok', detail: `${where} answers` },
          {
            name: 'key',
            status: 'fail',
            detail: `refused (${error.message}); from ${keySource}. Set CLIPDESK_API_KEY or run clipdesk login`,
          },
        ];
      }
      return [{ name: 'service', status: 'fail', detail: unreachableOrUnexpected(where, error) }];
    }
  } finally {
    await session.close();
  }
}

/** Where the built-in engine's own key is kept, in the user's words. */
function engineKeyPlace(storage: 'keychain' | 'file' | 'ephemeral', store: SecretStoreStatus): string {
  if (storage === 'keychain') return `in the ${store.backend === 'file' ? 'key file' : 'keychain'}`;
  if (storage === 'file') return `in the engine's data folder, ${ENGINE_KEY_FILE}`;
  return 'this run only';
}

/**
 * The engine runs in another process, which read the stored provider keys when it started: what
 * it uses now is that process's to say (`clipdesk providers` lists what it offers).
 */
function ownerProviderKeysCheck(owner: FolderOwner): Check {
  return {
    name: 'provider keys',
    status: 'ok',
    detail: `those ${owner.program} (pid ${owner.pid}) started with; clipdesk providers lists what it offers now`,
  };
}

/** The built-in engine's AI provider keys: which are set and where each comes from (never a key). */
async function providerKeysCheck(engine: EngineProviders, store: SecretStoreStatus): Promise<Check> {
  const statuses = await engine.providerStatus();
  const set = statuses.filter((s) => s.configured);
  if (set.length === 0)
    return {
      name: 'provider keys',
      status: 'ok',
      detail:
        'none (the built-in offline providers need none); add one with clipdesk providers set-key NAME, ' +
        "Settings → Providers, or the provider's variable (FAL_KEY, …)",
    };
  return {
    name: 'provider keys',
    status: 'ok',
    detail: set.map((s) => `${s.id} from ${keySourceText(s, store)}`).join('; '),
  };
}

/**
 * "Not reachable" only when no answer came (network, timeout); a service that answered with
 * something v1 does not expect says so, with the endpoint and the field from the client's error.
 */
function unreachableOrUnexpected(where: string, error: unknown): string {
  if (!isServiceError(error) || error.code === 'network_error' || error.code === 'timeout')
    return `${where} is not reachable: ${firstLine(error)}`;
  const status = error.status === undefined ? '' : ` (HTTP ${error.status})`;
  return `${where} is reachable but answered something unexpected${status}: ${firstLine(error)}`;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
