import { startLocalEngine, type EngineSpawner, type LocalEngine } from '../../core/engine/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { ProviderManager } from '../../core/providers/index.ts';
import type { SecretStore } from '../../core/secrets/index.ts';
import { PROVIDER_KEY_IDS } from '../../../shared/ipc/schemas/providers.ts';
import type { Logger } from '../../../shared/node/logger.ts';

/**
 * The Local engine starts with the first session that needs it and runs until quit, with the
 * provider keys and settings stored so far; later changes reach it through the manager.
 */
export function lazyLocalEngine(deps: {
  dataDir: string;
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  providers: ProviderManager;
  profiles: Profiles;
  spawner?: EngineSpawner;
}): (() => Promise<LocalEngine>) & { started(): Promise<LocalEngine> | null } {
  let engine: Promise<LocalEngine> | null = null;
  const start = (): Promise<LocalEngine> => {
    engine ??= (async () => {
      const e = await startLocalEngine({
        dataDir: deps.dataDir,
        secrets: deps.secrets,
        env: deps.env,
        logger: deps.logger,
        providers: await deps.providers.startOptions(PROVIDER_KEY_IDS),
        ...(deps.spawner ? { spawner: deps.spawner } : {}),
      });
      await deps.providers.attach(e.providers);
      deps.profiles.setLocalBaseUrl(e.url);
      return e;
    })();
    // A failed start is retried by the next caller.
    engine.catch(() => {
      engine = null;
    });
    return engine;
  };
  return Object.assign(start, { started: () => engine });
}
