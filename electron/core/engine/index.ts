export { LOCAL_ENGINE_USER, localEngineKeyAccount, startLocalEngine } from './local-engine.ts';
export type { EngineService, LocalEngine, LocalEngineOptions } from './local-engine.ts';
export { engineEnv, nodeEngineSpawner, type EngineChild, type EngineSpawner } from './engine-host.ts';
export type { EngineCatalogSync } from './protocol.ts';
export { EngineElsewhereError, openLocalEngine, type OpenEngineOptions } from './open-local-engine.ts';
export { ENGINE_KEY_FILE } from './engine-key.ts';
