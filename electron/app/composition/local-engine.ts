import { openLocalEngine, type EngineSpawner, type LocalEngine } from '../../core/engine/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { ProviderManager } from '../../core/providers/index.ts';
import type { SecretStore } from '../../core/secrets/index.ts';
import { PROVIDER_KEY_IDS } from '../../../shared/ipc/schemas/providers.ts';
import type { Logger } from '../../../shared/node/logger.ts';

/**
 * The Local engine starts with the first session that needs it and runs until quit, with the
 * provider keys and settings stored so far; later changes reach it through the manager. When a
 * live process already runs the engine on this data folder (a CLI command, `serve`), that one is
 * used, and taken over once it stops (docs/architecture.md, "One engine per data folder").
 */
export function lazyLocalEngine(deps: {
  dataDir: string;
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  providers: ProviderManager;
  profiles: Profiles;
  spawner?: EngineSpawner;
  /** What runs the engine, as another process names it: "the Clipdesk app", "clipdesk mcp". */
  program?: string;
}): (() => Promise<LocalEngine>) & { started(): Promise<LocalEngine> | null; moves(): number } {
  let engine: Promise<LocalEngine> | null = null;
  // How often the engine's address changed (a takeover on another port): sessions built on it follow.
  let moves = 0;
  const start = (): Promise<LocalEngine> => {
    engine ??= (async () => {
      const e = await openLocalEngine({
        dataDir: deps.dataDir,
        secrets: deps.secrets,
        env: deps.env,
        logger: deps.logger,
        program: deps.program ?? 'the Clipdesk app',
        providers: await deps.providers.startOptions(PROVIDER_KEY_IDS),
        providerOptions: () => deps.providers.startOptions(PROVIDER_KEY_IDS),
        onWait: (line) => deps.logger.info(line),
        onUrlChange: (next) => {
          moves++;
          deps.profiles.setLocalBaseUrl(next);
        },
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
  return Object.assign(start, { started: () => engine, moves: () => moves });
}
