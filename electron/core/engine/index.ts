export { LOCAL_ENGINE_USER, localEngineKeyAccount, startLocalEngine } from './local-engine.ts';
export type { EngineService, LocalEngine, LocalEngineOptions } from './local-engine.ts';
export { engineEnv, nodeEngineSpawner, type EngineChild, type EngineSpawner } from './engine-host.ts';
export type { EngineCatalogSync } from './protocol.ts';
