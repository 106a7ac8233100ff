export { engineProviders } from './engine.ts';
export type { EngineKeyTest, EngineProviderOptions, EngineProviders, EngineProviderStatus } from './engine.ts';
export { createProviderKeyStore, providerKeyAccount, ProviderKeyError } from './key-store.ts';
export type { ProviderKeyInfo, ProviderKeyStore } from './key-store.ts';
export { createProviderManager, ProviderEngineUnavailableError } from './manager.ts';
export type { ProviderManager, ProviderManagerOptions } from './manager.ts';
export { createProviderSettings } from './settings.ts';
export type { ProviderSettings, ProviderSettingsView } from './settings.ts';
