export { LOCAL_ENGINE_USER, localEngineKeyAccount, startLocalEngine } from './local-engine.ts';
export type { LocalEngine, LocalEngineOptions } from './local-engine.ts';
