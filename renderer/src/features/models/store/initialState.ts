import type { ModelRecord, ProviderRecord } from '../../../../../shared/api/catalog.ts';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface ModelsState {
  status: LoadStatus;
  error: string | null;
  models: ModelRecord[];
  providers: ProviderRecord[];
  /** Picker filters. */
  search: string;
  capabilities: string[];
}

export const initialState: ModelsState = {
  status: 'idle',
  error: null,
  models: [],
  providers: [],
  search: '',
  capabilities: [],
};
