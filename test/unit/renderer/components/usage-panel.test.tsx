import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { UsagePanel } from '../../../../renderer/src/features/settings/components/UsagePanel.tsx';
import { installFakeIpc, type FakeIpc } from '../fixtures.ts';

// Settings → Usage with a service that reports only part of GET /usage (docs/api.md "Extensions").
let ipc: FakeIpc;
beforeEach(() => {
  ipc = installFakeIpc();
});
afterEach(cleanup);

const rateLimit = { limit: null, remaining: null, reset: null, waitMs: 0, tier: null };

describe('the usage panel', () => {
  it('shows the meters it has both figures for, and says once that the service reports only part', async () => {
    ipc.usage.get.mockResolvedValue({
      usage: {
        limits: { rate: { minute: 10, hour: 100, day: 1000 } },
        usage: { requests: { minute: 3, hour: 5, day: 9 } },
      },
      rateLimit,
    });
    render(<UsagePanel />);
    expect(await screen.findByText(/reports only part of its usage/)).toBeTruthy();
    // The request meters (both figures there); no running or storage meters (no figures).
    expect(screen.getAllByRole('meter')).toHaveLength(3);
    expect(screen.getAllByText(/reports only part/)).toHaveLength(1);
    expect(screen.queryByText(/tier$/)).toBeNull();
    expect(screen.queryByText(/Retention/)).toBeNull();
  });
});
