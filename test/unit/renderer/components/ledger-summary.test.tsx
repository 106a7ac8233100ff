import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import type { Reconciliation } from '../../../../shared/ipc/schemas/ledger.ts';
import { LedgerSummary } from '../../../../renderer/src/features/settings/components/LedgerSummary.tsx';
import { useSettings } from '../../../../renderer/src/stores/settings/index.ts';

// Settings → Usage: what other clients of the app's key made (the CLI) is shown apart and never as
// "Charged but not delivered", which only names this app's jobs.
const DAY = '2026-11-23';
const clean: Reconciliation = {
  total: 0.04,
  notDelivered: 0,
  jobs: [],
  differences: [],
  otherKeys: 0,
  otherClients: 0,
  perDay: true,
};

beforeEach(() => useSettings.setState({ reconciliation: null, recovering: [] }));
afterEach(cleanup);

describe('the ledger summary', () => {
  it('shows the CLI’s charges on the app’s key apart, with no “not delivered” alarm', () => {
    useSettings.setState({
      reconciliation: {
        ...clean,
        otherClients: 0.092,
        differences: [{ key: 'ab12', day: DAY, service: 0.132, ledger: 0.04, otherClients: 0.092, unexplained: 0 }],
      },
    });
    render(<LedgerSummary />);
    expect(screen.queryByRole('region', { name: 'Charged but not delivered' })).toBeNull();
    expect(screen.getByText(/by other clients/)).toBeTruthy();
    expect(screen.getByLabelText('Other clients').textContent).toBe('$0.092');
  });

  it('says what nothing explains in one line, still without the alarm', () => {
    useSettings.setState({
      reconciliation: {
        ...clean,
        differences: [{ key: 'ab12', day: DAY, service: 0.12, ledger: 0.04, otherClients: 0, unexplained: 0.08 }],
      },
    });
    render(<LedgerSummary />);
    expect(screen.queryByRole('region', { name: 'Charged but not delivered' })).toBeNull();
    expect(screen.getByText(/\$0\.08\d* on 2026-11-23 that neither this app’s jobs/)).toBeTruthy();
  });
});
