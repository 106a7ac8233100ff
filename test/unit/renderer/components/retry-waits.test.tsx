// The queue says every wait before something is tried again: what it waits for and how long
// (docs/architecture.md, "One retry budget"), for a transfer as for a generation's requests.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, within } from '@testing-library/react';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { installFakeIpc, job } from '../fixtures.ts';
import { renderJobRow } from './job-row-render.tsx';

const NOW = Date.parse('2026-01-01T00:01:00.000Z');

beforeEach(() => {
  installFakeIpc();
  useQueue.getState().reset();
});
afterEach(cleanup);

const row = (j: ReturnType<typeof job>) => renderJobRow(j, { now: NOW });

describe('retry waits in the queue', () => {
  it('a broken download waiting to resume says so above its bar, with the failure', () => {
    const li = row(
      job({
        state: 'downloading',
        position: null,
        download: {
          done: 1_000,
          total: 4_000,
          wait: {
            reason: 'retry',
            what: 'the download of med_1',
            until: new Date(NOW + 2_000).toISOString(),
            message: 'socket hang up',
          },
        },
      }),
    );
    expect(within(li).getByRole('status', { name: 'Retrying' }).textContent).toBe(
      'Retrying: waiting 2s before the download of med_1 (socket hang up)',
    );
  });

  it('a wait that has passed is no longer shown', () => {
    const li = row(
      job({
        state: 'uploading',
        position: null,
        upload: {
          done: 0,
          total: 10,
          wait: { reason: 'retry', what: 'the upload of a.png', until: new Date(NOW - 1).toISOString() },
        },
      }),
    );
    expect(within(li).queryByRole('status', { name: 'Retrying' })).toBeNull();
  });

  it("a generation's request tried again after a 5xx is a retry, not a rate limit", () => {
    const li = row(
      job({
        state: 'generating',
        position: null,
        generation: {
          id: 'gen_1',
          step: 'generating',
          queuePosition: null,
          progress: null,
          wait: { reason: 'retry', what: 'GET /generations/gen_1', until: new Date(NOW + 1_000).toISOString() },
        },
      }),
    );
    expect(within(li).getByRole('status', { name: 'Retrying' }).textContent).toBe(
      'Retrying: waiting 1s before GET /generations/gen_1',
    );
    expect(within(li).queryByRole('status', { name: 'Rate limited' })).toBeNull();
  });
});
