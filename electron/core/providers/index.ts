export type { EngineProviderOptions, EngineProviders, EngineProviderStatus } from './engine.ts';
export { createProviderKeyStore } from './key-store.ts';
export { createProviderManager } from './manager.ts';
export type { ProviderManager } from './manager.ts';
export { createProviderSettings } from './settings.ts';
