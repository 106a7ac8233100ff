import type { Job, QueueStats } from '../../../../../shared/ipc/index.ts';
import type { LoadStatus } from '../../../stores/models/initialState.ts';

export interface QueueState {
  status: LoadStatus;
  error: string | null;
  /** By id; order comes from the selectors. */
  jobs: Record<string, Job>;
  stats: QueueStats | null;
  /** Epoch ms the stats arrived: their "in N ms" estimates count down from there. */
  statsAt: number | null;
  /** Ids with a call in flight, so their buttons can wait. */
  busy: string[];
}

export const initialState: QueueState = { status: 'idle', error: null, jobs: {}, stats: null, statsAt: null, busy: [] };
