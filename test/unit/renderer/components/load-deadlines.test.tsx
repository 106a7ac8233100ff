import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { ComposeScreen } from '../../../../renderer/src/features/compose/components/ComposeScreen.tsx';
import { UsagePanel } from '../../../../renderer/src/features/settings/components/UsagePanel.tsx';
import { LOAD_TIMEOUT_MS } from '../../../../renderer/src/lib/deadline.ts';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useSettings } from '../../../../renderer/src/stores/settings/index.ts';
import { installFakeIpc, model, type FakeIpc } from '../fixtures.ts';

// A load that never answers (a stuck main process, a service that accepted the connection and
// went quiet) must not leave a screen loading forever: each load has a deadline, then says so and
// offers a retry. Fake timers stand in for the wait.
let ipc: FakeIpc;
const never = () => new Promise<never>(() => {});
const PROVIDERS = {
  providers: [{ id: 'p_cheap', slug: 'cheap', name: 'Cheap Co', status: 'available', models: [], features: [] }],
};

beforeEach(() => {
  vi.useFakeTimers();
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  useSettings.setState({ usage: null, usageError: null, usageLoading: false, reconciliation: null });
});
afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

async function pass(ms: number): Promise<void> {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
  });
}

describe('every load has a deadline, an error and a retry', () => {
  it('the model list: an error after the deadline, then Retry loads it and Generate can go', async () => {
    ipc.models.list.mockReturnValue(never());
    ipc.providers.list.mockResolvedValue(PROVIDERS);
    render(<ComposeScreen />);
    expect(screen.getByRole('status', { name: 'Loading models' })).toBeTruthy();
    await pass(LOAD_TIMEOUT_MS);
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toMatch(/Could not load models: .*did not answer within \d+ s/);
    ipc.models.list.mockResolvedValue({ models: [model()] });
    ipc.compose.preview.mockReturnValue(never());
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    await pass(0);
    // The canvas names the loaded model on the dock's model chip (the list is its popover).
    expect(screen.getByRole('button', { name: /^Model:\s*Waves/ })).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(useCompose.getState().modelId).toBe('mdl_a');
  });

  it('the routing preview: “No price” with the reason after the deadline, and a retry', async () => {
    ipc.models.list.mockResolvedValue({ models: [model()] });
    ipc.providers.list.mockResolvedValue(PROVIDERS);
    ipc.compose.preview.mockReturnValue(never());
    useCompose.getState().setPrompt('a paper boat');
    render(<ComposeScreen />);
    await pass(0);
    await pass(LOAD_TIMEOUT_MS + 1_000);
    expect(screen.getByText(/No price: .*did not answer within \d+ s/)).toBeTruthy();
    const calls = ipc.compose.preview.mock.calls.length;
    fireEvent.click(screen.getByRole('button', { name: 'Retry the price' }));
    await pass(1_000);
    expect(ipc.compose.preview.mock.calls.length).toBe(calls + 1);
  });

  it('the usage: an error after the deadline, and Refresh asks again', async () => {
    ipc.usage.get.mockReturnValue(never());
    ipc.usage.reconcile = vi.fn().mockReturnValue(never());
    render(<UsagePanel />);
    await pass(LOAD_TIMEOUT_MS);
    expect(screen.getByRole('alert').textContent).toMatch(/did not answer within \d+ s/);
    expect(useSettings.getState().usageLoading).toBe(false);
    fireEvent.click(screen.getByRole('button', { name: /Refresh/ }));
    expect(ipc.usage.get).toHaveBeenCalledTimes(2);
  });
});
