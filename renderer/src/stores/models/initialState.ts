import type { ModelRecord, ProviderRecord } from '../../../../shared/api/model-records.ts';

export type LoadStatus = 'idle' | 'loading' | 'ready' | 'error';

export interface ModelsState {
  status: LoadStatus;
  error: string | null;
  /**
   * The models the picker offers, each with only the offers of providers that can take a request
   * (configured and switched on); a model no such provider offers is left out.
   */
  models: ModelRecord[];
  /** Every model the service lists, with every offer (the Providers panel shows what each offers). */
  catalog: ModelRecord[];
  providers: ProviderRecord[];
  /** Picker filters. */
  search: string;
  capabilities: string[];
}

export const initialState: ModelsState = {
  status: 'idle',
  error: null,
  models: [],
  catalog: [],
  providers: [],
  search: '',
  capabilities: [],
};
