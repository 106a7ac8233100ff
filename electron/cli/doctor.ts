import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import { dirname } from 'node:path';
import { logFilePath } from '../../shared/node/log-path.ts';
import { isServiceError } from '../core/api/index.ts';
import { defaultEngineDataDir } from '../core/settings/index.ts';
import { ENGINE_KEY_FILE } from '../core/engine/index.ts';
import type { FolderOwner } from '../../shared/node/data-folder-lock.ts';
import type { EngineProviders } from '../core/providers/index.ts';
import { keyStoreChoiceText, type SecretStoreStatus } from '../core/secrets/index.ts';
import { mediaChecks } from './doctor-ffmpeg.ts';
import { keySourceText } from './provider-keys.ts';
import { EXIT } from './errors.ts';
import type { CliIo } from './io.ts';
import { openSession, openStores } from './session.ts';
import { chooseService, type ServiceChoice } from './service-choice.ts';
import type { GlobalOptions } from './session.ts';

export { ffmpegMajor } from './doctor-ffmpeg.ts';

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

/**
 * `clipdesk doctor`: what this machine gives the app, one line per check, in the order a problem
 * would be looked for. A failure (something the app cannot work without) makes the exit code 1;
 * a warning does not.
 */
export async function doctor(io: CliIo, global: GlobalOptions, flags: { json?: boolean }): Promise<number> {
  const { userDataDir, secrets, keyStore, profiles } = openStores(io, global);
  const settings = profiles.settings();
  const checks: Check[] = [nodeCheck(process.versions.node)];

  checks.push(...(await mediaChecks(io.env, settings.ffmpegPath)));

  const keychain = await secrets.status();
  checks.push(keyStoreCheck(keychain), { name: 'key store', status: 'ok', detail: keyStoreChoiceText(keyStore) });

  // The service the other commands use: --base-url, CLIPDESK_BASE_URL, else the current profile.
  const service = await chooseService(profiles, global.baseUrl, io.env);
  const remote = service.kind === 'remote' ? service.baseUrl : undefined;
  checks.push(await folderCheck('data', userDataDir));
  if (!remote) checks.push(await folderCheck('engine data', defaultEngineDataDir(userDataDir)));
  checks.push(await folderCheck('downloads', settings.downloadDir));
  checks.push(...(await serviceChecks(io, global, { url: remote, where: serviceLabel(service) }, keychain)));
  // This CLI's own log, then the app's (the app and its engine write app.log; docs/cli.md).
  checks.push({ name: 'log file', status: 'ok', detail: logFilePath(userDataDir, 'cli') });
  checks.push({ name: 'app log file', status: 'ok', detail: logFilePath(userDataDir, 'app') });

  const failed = checks.some((c) => c.status === 'fail');
  if (flags.json) io.stdout(`${JSON.stringify({ ok: !failed, checks }, null, 2)}\n`);
  else for (const c of checks) io.stdout(`${c.status.padEnd(4)}  ${c.name.padEnd(14)}  ${c.detail}\n`);
  return failed ? EXIT.unexpected : EXIT.ok;
}

/**
 * Where keys are kept. A key file kept plainly is the user's choice, but one worth a warning every
 * time it is checked; a key file whose keys cannot be read (the passphrase missing or wrong) is a
 * failure: the keys chosen are there, and nothing can use them until the passphrase is fixed.
 */
function keyStoreCheck(store: SecretStoreStatus): Check {
  const detail = `${store.backend}: ${store.message}`;
  if (!store.available) return { name: 'keychain', status: store.backend === 'file' ? 'fail' : 'warn', detail };
  const plainFile = store.backend === 'file' && store.message.startsWith('Warning');
  return { name: 'keychain', status: plainFile ? 'warn' : 'ok', detail };
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

/** The service and why it is the one (docs/cli.md "Which service"). */
function serviceLabel(service: ServiceChoice): string {
  if (service.kind === 'local') return 'the embedded Local engine, the current profile';
  return `${service.baseUrl}, ${service.from === 'profile' ? 'the current profile' : `from ${service.from}`}`;
}

/** Reaches the service with the key the CLI would use: GET /usage answers both questions. */
async function serviceChecks(
  io: CliIo,
  global: GlobalOptions,
  target: { url: string | undefined; where: string },
  store: SecretStoreStatus,
): Promise<Check[]> {
  const { url: remote, where } = target;
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
  // Keys in a key file that does not open are not "none": say why they are not seen.
  const unread = store.backend === 'file' && !store.available ? `; ${store.message}` : '';
  if (unread)
    return {
      name: 'provider keys',
      status: 'fail',
      detail: `${set.length === 0 ? 'none usable' : set.map((s) => `${s.id} from ${keySourceText(s, store)}`).join('; ')}${unread}`,
    };
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
