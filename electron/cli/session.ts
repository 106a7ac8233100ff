import { join } from 'node:path';
import { createApiClient } from '../core/api/index.ts';
import type { ApiClient } from '../core/api/index.ts';
import { createDownloadManager, FLAT_NAMING_PATTERN } from '../core/downloads/index.ts';
import type { DownloadManager } from '../core/downloads/index.ts';
import { openLocalEngine } from '../core/engine/index.ts';
import type { LocalEngine } from '../core/engine/index.ts';
import { createProfiles } from '../core/profiles/index.ts';
import { defaultUserDataDir, defaultEngineDataDir, imageDownloadDir } from '../core/settings/index.ts';
import type { Profiles } from '../core/profiles/index.ts';
import { PROVIDER_KEY_IDS } from '../../shared/ipc/schemas/providers.ts';
import { createConfSettingsStore } from '../core/settings/index.ts';
import type { SettingsStore } from '../core/settings/index.ts';
import { engineProviderManager } from './provider-keys.ts';
import { createSecretStore, keyStoreChoice, secretStoreOptions } from '../core/secrets/index.ts';
import type { KeyStoreChoice, SecretStore } from '../core/secrets/index.ts';
import { createFileDedupStore, createUploader } from '../core/uploads/index.ts';
import type { Uploader } from '../core/uploads/index.ts';
import { createFileLogger } from '../../shared/node/logger.ts';
import type { CliIo } from './io.ts';
import { chooseService } from './service-choice.ts';

export interface GlobalOptions {
  baseUrl?: string;
  data?: string;
  /** `--key-store keychain|file` (default CLIPDESK_KEY_STORE, else the OS keychain). */
  keyStore?: string;
}

/** Everything a command needs, wired by hand; `close()` stops the engine and the pool. */
export interface Session {
  api: ApiClient;
  profiles: Profiles;
  secrets: SecretStore;
  userDataDir: string;
  uploader: Uploader;
  /**
   * Where downloads go: without `out`, the app's library (its folder and naming pattern); with
   * `out`, the file in that folder itself, or laid out as the library is when `libraryLayout`.
   */
  downloads(out?: { dir: string; libraryLayout: boolean }): DownloadManager;
  engine: LocalEngine | null;
  /** The embedded engine's data folder (what a `clipdesk-media:` reference resolves in), else null. */
  engineDataDir: string | null;
  close(): Promise<void>;
}

export function openStores(
  io: CliIo,
  global: GlobalOptions,
): {
  userDataDir: string;
  secrets: SecretStore;
  keyStore: KeyStoreChoice;
  profiles: Profiles;
  settingsStore: SettingsStore;
} {
  const userDataDir = global.data ?? defaultUserDataDir(io.env);
  // The key store given (--key-store, CLIPDESK_KEY_STORE) or the one last chosen for this data folder.
  const keyStore = keyStoreChoice({ flag: global.keyStore, env: io.env, userDataDir });
  const secrets = createSecretStore(secretStoreOptions(keyStore));
  const settingsStore = createConfSettingsStore(userDataDir);
  const profiles = createProfiles({ store: settingsStore, secrets, envKey: io.env['CLIPDESK_API_KEY'] ?? null });
  return { userDataDir, secrets, keyStore, profiles, settingsStore };
}

/** The profile of a remote base URL, created on first use (login). */
export async function profileFor(profiles: Profiles, baseUrl: string): Promise<string> {
  const normal = new URL(baseUrl).href.replace(/\/+$/, '');
  const list = await profiles.list();
  const found = list.profiles.find((p) => p.kind === 'remote' && p.baseUrl === normal);
  if (found) return found.id;
  return (await profiles.create({ name: new URL(normal).host, baseUrl: normal })).id;
}

export async function openSession(io: CliIo, global: GlobalOptions): Promise<Session> {
  const stores = openStores(io, global);
  const { userDataDir, secrets, profiles } = stores;
  const envKey = io.env['CLIPDESK_API_KEY']?.trim() || null;
  // --base-url, else CLIPDESK_BASE_URL, else the current profile (service-choice.ts).
  const service = await chooseService(profiles, global.baseUrl, io.env);
  // The CLI's log is a file (stdout carries only results): logFilePath(userDataDir, 'cli').
  const log = createFileLogger({ dataDir: userDataDir, program: 'cli' });
  const retriesText = io.env['CLIPDESK_RATE_LIMIT_RETRIES'];
  const retry = retriesText && /^\d+$/.test(retriesText) ? { retry: { maxRateLimitRetries: Number(retriesText) } } : {};
  // First wait between polls of an asynchronous generation (it grows while nothing changes).
  const pollText = io.env['CLIPDESK_POLL_INTERVAL_MS'];
  const poll =
    pollText && /^\d+$/.test(pollText)
      ? { poll: { initialMs: Number(pollText), maxMs: Math.max(Number(pollText), 10_000) } }
      : {};
  let engine: LocalEngine | null = null;
  let engineDataDir: string | null = null;
  let api: ApiClient;
  if (service.kind === 'remote') {
    const account = service.profileId === null ? null : profiles.keyAccount(service.profileId);
    api = createApiClient({
      ...retry,
      ...poll,
      // A malformed extension field is dropped with one line in the CLI's log (docs/api.md).
      onNotice: (line) => log.logger.warn({ component: 'api' }, line),
      baseUrl: service.baseUrl,
      getKey: async () => envKey ?? (account ? await secrets.get(account).catch(() => null) : null),
    });
  } else {
    engineDataDir = defaultEngineDataDir(userDataDir);
    const providers = engineProviderManager(stores, log.logger);
    // The engine a live process (the app, another command, `serve`) runs on this folder is used as
    // it is; only when none does is one started here (docs/architecture.md, "One engine per data folder").
    engine = await openLocalEngine({
      dataDir: engineDataDir,
      secrets,
      env: io.env,
      logger: log.logger.child({ component: 'engine' }),
      program: 'the clipdesk CLI',
      // The keys, switches and base URLs the app (Settings → Providers) or `clipdesk providers
      // set-key` stored for the built-in engine: the CLI's engine is the same one.
      providers: await providers.startOptions(PROVIDER_KEY_IDS),
      providerOptions: () => providers.startOptions(PROVIDER_KEY_IDS),
      onWait: (line) => io.stderr(`${line}\n`),
    }).catch(async (error: unknown) => {
      log.logger.error({ err: error }, 'the Local engine did not start');
      await log.close();
      throw error;
    });
    profiles.setLocalBaseUrl(engine.url);
    const local = engine;
    api = createApiClient({ ...retry, ...poll, baseUrl: engine.url, getKey: () => envKey ?? local.getKey() });
  }
  const settings = profiles.settings();
  const uploader = createUploader({
    api,
    dedup: createFileDedupStore(join(userDataDir, 'uploads.json')),
    // The engine's port changes every run; its data folder names the same service each time.
    ...(engineDataDir === null ? {} : { serviceKey: `local-engine:${engineDataDir}` }),
  });
  return {
    api,
    profiles,
    secrets,
    userDataDir,
    uploader,
    engine,
    engineDataDir,
    downloads: (out) =>
      createDownloadManager({
        api,
        dir: out?.dir ?? settings.downloadDir,
        // Without --out, images go where the app saves them (the pictures folder by default).
        ...(out ? {} : { imageDir: imageDownloadDir(settings) }),
        pattern: out && !out.libraryLayout ? FLAT_NAMING_PATTERN : settings.namingPattern,
      }),
    async close() {
      await api.dispose();
      await engine?.close();
      await log.close();
    },
  };
}
