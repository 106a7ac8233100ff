import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, waitFor, within } from '@testing-library/react';
import type { Job } from '../../../../shared/ipc/index.ts';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, type FakeIpc } from '../fixtures.ts';
import { renderJobRow } from './job-row-render.tsx';

let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:01:00.000Z');

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useCompose.getState().reset();
  useShell.getState().reset();
  useModels.getState().reset();
});
afterEach(cleanup);

const row = (j: Job, index: number | null, queuedCount = 3) => renderJobRow(j, { index, queuedCount, now: NOW });

describe('a job row', () => {
  it('a waiting job shows its place and moves in the queue or cancels', () => {
    ipc.jobs.reorder.mockResolvedValue({ jobs: [] });
    const li = row(job(), 1);
    expect(within(li).getByLabelText('Position 2 in the queue').textContent).toBe('2');
    expect(within(li).getByTestId('job-state').textContent).toBe('Queued');
    fireEvent.click(within(li).getByRole('button', { name: 'Move up' }));
    expect(ipc.jobs.reorder).toHaveBeenCalledWith({ id: 'job_1', toIndex: 0 });
    expect(within(li).getByRole('button', { name: 'Cancel' })).toBeTruthy();
    expect(within(li).queryByRole('button', { name: 'Retry' })).toBeNull();
  });

  it('the first and last waiting jobs cannot move past the ends', () => {
    const li = row(job(), 0, 1);
    expect(within(li).getByRole<HTMLButtonElement>('button', { name: 'Move up' }).disabled).toBe(true);
    expect(within(li).getByRole<HTMLButtonElement>('button', { name: 'Move down' }).disabled).toBe(true);
  });

  it('a running job shows its transfer progress', () => {
    const li = row(job({ state: 'uploading', upload: { done: 25, total: 100 } }), null);
    expect(within(li).getByRole('progressbar', { name: 'Upload progress' }).getAttribute('aria-valuenow')).toBe('25');
    expect(within(li).queryByRole('button', { name: 'Move up' })).toBeNull();
  });

  it('a failed job says why, retries, or goes back to Compose with its request', async () => {
    const failed = job({
      state: 'failed',
      request: { ...job().request, prompt: 'a fox in the rain', duration: 6 },
      error: { code: 'provider_error', message: 'the provider gave up' },
      attempts: 2,
    });
    const li = row(failed, null);
    expect(within(li).getByText('!')).toBeTruthy();
    expect(within(li).getByRole('alert').textContent).toBe('provider_error: the provider gave up');
    expect(within(li).getByText('2 attempts')).toBeTruthy();
    fireEvent.click(within(li).getByRole('button', { name: 'Edit' }));
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    expect(useCompose.getState().prompt).toBe('a fox in the rain');
  });

  it('a done job opens the Library and can leave the list', () => {
    const li = row(job({ state: 'done', finishedAt: '2026-01-01T00:00:30.000Z' }), null);
    expect(within(li).getByText('✓')).toBeTruthy();
    expect(within(li).getByRole('button', { name: 'Remove from list' })).toBeTruthy();
    expect(within(li).queryByRole('button', { name: 'Cancel' })).toBeNull();
    fireEvent.click(within(li).getByRole('button', { name: 'Open in Library' }));
    expect(useShell.getState().screen).toBe('library');
  });

  it('shows where routing sends a job and its price; a start frame routing drops is said to be dropped', () => {
    const request = { ...job().request, startFrame: { kind: 'url' as const, url: 'https://x.test/f.png' } };
    const route = (dropped: string[]) => ({
      routing: 'cheapest' as const,
      providerId: 'local-swift',
      providerName: 'Local Swift (procedural)',
      price: 0.02,
      dropped,
    });
    const dropped = row(job({ id: 'j_d', request: { ...request, prompt: 'dropped' }, route: route(['image_url']) }), 0);
    expect(within(dropped).getByTestId('job-provider').textContent).toBe('Local Swift (procedural)');
    expect(within(dropped).getByTestId('job-price').textContent).toBe('$0.020');
    expect(within(dropped).getByTestId('job-frame-dropped').textContent).toBe('start frame dropped');
    expect(within(dropped).queryByText('start frame')).toBeNull();
    cleanup();
    const kept = row(job({ id: 'j_k', request: { ...request, prompt: 'kept' }, route: route([]) }), 0);
    expect(within(kept).getByText('start frame')).toBeTruthy();
    expect(within(kept).queryByTestId('job-frame-dropped')).toBeNull();
  });

  it('a canceled job shows "not charged", or what the service charged, never the estimate made before the submit', () => {
    const route = {
      routing: 'optimal' as const,
      providerId: 'local-prism',
      providerName: null,
      price: 0.184,
      dropped: [],
    };
    const canceled = row(job({ id: 'j_c', state: 'canceled', route }), null);
    expect(within(canceled).getByTestId('job-price').textContent).toBe('not charged');
    cleanup();
    // Canceled during its download: the render was over and charged; the row says that charge.
    const charged = row(
      job({ id: 'j_cc', state: 'canceled', route, result: { itemIds: ['m_1'], price: 0.092, paths: [] } }),
      null,
    );
    expect(within(charged).getByTestId('job-price').textContent).toBe('$0.092');
    cleanup();
    // A job that has not ended shows the price the preview gave at submit.
    const queued = row(job({ id: 'j_q', route }), 0);
    expect(within(queued).getByTestId('job-price').textContent).toBe('$0.184');
  });

  it('names the provider as the providers list does, whatever the response called it', () => {
    useModels.setState({
      providers: [
        {
          id: 'local-prism',
          slug: 'prism',
          name: 'Local Prism (procedural)',
          status: 'available',
          models: [],
          features: [],
        },
      ],
    });
    // A job whose route came from the response alone (a fallback, or variations: no preview) and was
    // stored with the provider's slug as its name before routes stopped doing that.
    const route = {
      routing: 'optimal' as const,
      providerId: 'local-prism',
      providerName: 'prism',
      price: 0.1,
      dropped: [],
    };
    const li = row(job({ state: 'done', route, result: { itemIds: ['m_1'], price: 0.1, paths: [] } }), null);
    expect(within(li).getByTestId('job-provider').textContent).toBe('Local Prism (procedural)');
  });
});
