import type {
  ProviderEntry,
  ProvidersList,
  ProviderTestResult,
  RefreshModelsResult,
} from '../../../../../shared/ipc/index.ts';
import type { LoadStatus } from '../../../stores/models/initialState.ts';

export type ProviderAction = 'saving' | 'removing' | 'testing' | 'switching' | 'url';

export interface ProvidersState {
  status: LoadStatus;
  error: string | null;
  /** `app`: the Local engine's, editable here. `operator`: a remote service's, read-only. */
  keysHeldBy: ProvidersList['keysHeldBy'] | null;
  /** Where main keeps the keys it stores, in its own words (a plain key file says so). */
  keyStore: string | null;
  /** False when the stored keys cannot be read (a key file's passphrase missing or wrong): `keyStore` says why. */
  keyStoreAvailable: boolean;
  providers: ProviderEntry[];
  /** Provider id → the action running on it (buttons show it and stay disabled meanwhile). */
  busy: Record<string, ProviderAction>;
  /** Provider id → the last "Test key" answer. */
  tests: Record<string, ProviderTestResult>;
  /** Provider id → why the last key did not save (checked here first, then by main). */
  keyErrors: Record<string, string>;
  /** Provider id → why the last base URL did not save. */
  urlErrors: Record<string, string>;
  /** "Refresh models": running, or the last sync's report (or why it could not run). */
  refresh: { running: boolean; report: RefreshModelsResult | null; error: string | null };
}

export const initialState: ProvidersState = {
  status: 'idle',
  error: null,
  keysHeldBy: null,
  keyStore: null,
  keyStoreAvailable: true,
  providers: [],
  busy: {},
  tests: {},
  keyErrors: {},
  urlErrors: {},
  refresh: { running: false, report: null, error: null },
};
