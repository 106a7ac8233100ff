import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
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
  renderOpenCompose();
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
    expect(ipc.jobs.submitBatch).not.toHaveBeenCalled();
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

  it('shows the service preview’s rows and the selected mode’s price, following the duration', async () => {
    // The service's answer, priced per second like the Local engine: each mode its own provider.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the fake of an async IPC route
    ipc.compose.preview.mockImplementation((request: { duration?: number; startFrame?: unknown }) => {
      const seconds = request.duration ?? 4;
      const row = (routing: string, name: string, perSecond: number, dropped: string[] = []) => ({
        routing,
        provider: { id: name, slug: name, name },
        unitPrice: perSecond * seconds,
        price: perSecond * seconds,
        dropped,
        reason: `${name} reason`,
        error: null,
      });
      return Promise.resolve({
        model: 'local/waves:2',
        media: 'video',
        count: 1,
        routing: 'optimal',
        pinned: null,
        rows: [
          row('optimal', 'Full House', 0.011),
          row('cheapest', 'Cheap Co', 0.01, request.startFrame ? ['image_url'] : []),
          row('compatible', 'Pricey', 0.05),
        ],
      });
    });
    await pickModel();
    const price = screen.getByLabelText('Estimated price');
    await waitFor(() => expect(price.textContent).toContain('$0.044'));
    expect(within(screen.getByTestId('route-optimal')).getByText('Full House')).toBeTruthy();
    expect(within(screen.getByTestId('route-cheapest')).getByText('$0.040')).toBeTruthy();
    expect(screen.getByTestId('route-optimal').className).toContain('selected');
    fireEvent.change(screen.getByRole('slider', { name: 'Duration' }), { target: { value: '8' } });
    await waitFor(() => expect(price.textContent).toContain('$0.088'));
    fireEvent.click(screen.getByRole('radio', { name: 'Cheapest' }));
    await waitFor(() => expect(price.textContent).toContain('$0.080'));
    expect(screen.getByTestId('route-cheapest').className).toContain('selected');
    // Generate ×N says what the N takes cost, under the same accessible name.
    const batch = screen.getByRole('button', { name: /^Generate ×\d+$/ });
    const count = Number(/×(\d+)/.exec(batch.textContent ?? '')?.[1]);
    expect(batch.textContent).toContain(`· $${(0.08 * count).toFixed(3)}`);
    // A start frame cheapest would drop is said before submit, beside the frame and in the row.
    const zone = screen.getByRole('button', { name: /Start frame drop zone/ });
    const file = new File([new Uint8Array(8)], 'frame.png', { type: 'image/png' });
    fireEvent.drop(zone, { dataTransfer: { files: [file], getData: () => '' } });
    expect(await screen.findByTestId('start-frame-dropped')).toBeTruthy();
    expect(within(screen.getByTestId('route-cheapest')).getByText('Drops start frame')).toBeTruthy();
  });

  it('Ctrl+Enter generates', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    await pickModel();
    fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'sunrise' } });
    fireEvent.keyDown(window, { key: 'Enter', ctrlKey: true });
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
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
