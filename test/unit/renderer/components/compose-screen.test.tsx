import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { ComposeScreen } from '../../../../renderer/src/features/compose/components/ComposeScreen.tsx';
import { useCompose } from '../../../../renderer/src/features/compose/store/index.ts';
import { useModels } from '../../../../renderer/src/features/models/store/index.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [model()] });
  ipc.providers.list.mockResolvedValue({
    providers: [
      { id: 'p_cheap', slug: 'cheap', name: 'Cheap Co', status: 'available', models: [], features: [] },
      { id: 'p_full', slug: 'full', name: 'Full House', status: 'available', models: [], features: [] },
    ],
  });
  URL.createObjectURL = vi.fn(() => 'blob:x');
  URL.revokeObjectURL = vi.fn();
});
afterEach(cleanup);

async function pickModel() {
  render(<ComposeScreen />);
  const option = await screen.findByRole('option', { name: /Waves/ });
  fireEvent.click(option);
}

describe('Compose screen', () => {
  it('counts the prompt live and refuses to submit past 500 characters', async () => {
    await pickModel();
    const prompt = screen.getByLabelText('Prompt');
    fireEvent.change(prompt, { target: { value: 'x'.repeat(501) } });
    expect(screen.getByText(/501 \/ 500 characters — 1 over the limit/)).toBeTruthy();
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Generate' }).disabled).toBe(true);
    fireEvent.keyDown(window, { key: 'Enter', ctrlKey: true });
    expect(ipc.jobs.submit).not.toHaveBeenCalled();
  });

  it('builds parameters from the model rules: the duration slider starts at the default', async () => {
    await pickModel();
    const slider = screen.getByRole<HTMLInputElement>('slider', { name: 'Duration' });
    expect(slider.value).toBe('4');
    expect(slider.min).toBe('2');
    expect(slider.max).toBe('8');
    expect(screen.getByLabelText<HTMLSelectElement>('Size').value).toBe('720p');
    expect(screen.getByLabelText('Style')).toBeTruthy();
  });

  it('routing has one-line explanations and is disabled when a provider is pinned', async () => {
    await pickModel();
    const optimal = screen.getByRole<HTMLInputElement>('radio', { name: 'Optimal' });
    expect(optimal.checked).toBe(true);
    expect(screen.getByText(/may pay up to 20% more/)).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Provider'), { target: { value: 'p_full' } });
    expect(screen.getByRole<HTMLInputElement>('radio', { name: 'Cheapest' }).disabled).toBe(true);
    expect(screen.getByText(/off while a provider is pinned/)).toBeTruthy();
  });

  it('shows a price estimate that follows the duration', async () => {
    await pickModel();
    const price = screen.getByLabelText('Estimated price');
    expect(price.textContent).toContain('$0.040');
    fireEvent.change(screen.getByRole('slider', { name: 'Duration' }), { target: { value: '8' } });
    expect(price.textContent).toContain('$0.080');
  });

  it('Ctrl+Enter generates', async () => {
    ipc.jobs.submit.mockResolvedValue(job());
    await pickModel();
    fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'sunrise' } });
    fireEvent.keyDown(window, { key: 'Enter', ctrlKey: true });
    await waitFor(() => expect(ipc.jobs.submit).toHaveBeenCalledTimes(1));
  });

  it('refuses a 21 MB image dropped as the start frame, with a clear message, before any upload', async () => {
    await pickModel();
    const zone = screen.getByRole('button', { name: /Start frame drop zone/ });
    const file = new File([new Uint8Array(8)], 'huge.png', { type: 'image/png' });
    Object.defineProperty(file, 'size', { value: 21_000_000 });
    fireEvent.drop(zone, { dataTransfer: { files: [file], getData: () => '' } });
    const alert = await screen.findByRole('alert');
    expect(
      within(alert).getByText(/huge\.png is 21 MB; start frames can be at most 20 MB\. Nothing was uploaded\./),
    ).toBeTruthy();
    expect(ipc.uploads.fromBytes).not.toHaveBeenCalled();
  });
});
