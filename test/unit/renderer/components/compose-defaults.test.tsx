import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ModelRecord } from '../../../../shared/api/model-records.ts';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { imageModel, installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

// What Compose shows before the creator picks anything: a model already chosen, and a first
// estimate that says why it is above the model card's "from" price.
let ipc: FakeIpc;

/** Like the Local engine's Motion: 1080p by default, which only its dearest provider renders. */
const motion = model({
  id: 'mdl_motion',
  slug: 'motion',
  name: 'Motion',
  parameters: { duration: { min: 2, max: 8, default: 4 }, size: { values: ['720p', '1080p'], default: '1080p' } },
  providers: [
    { id: 'local-swift', slug: 'swift', price: 0.01, features: ['text_to_video'], sizes: ['720p'] },
    { id: 'local-studio', slug: 'studio', price: 0.02, features: ['text_to_video'], sizes: ['720p'] },
    { id: 'local-prism', slug: 'prism', price: 0.023, features: ['text_to_video', 'hd'], sizes: ['720p', '1080p'] },
  ],
});
const other: ModelRecord = model({ id: 'mdl_other', slug: 'other', name: 'Other' });

/** The preview the service gives: every mode on Prism at 1080p; each its own provider at 720p. */
function previewOf(request: { size?: string; duration?: number }) {
  const seconds = request.duration ?? 4;
  const row = (routing: string, id: string, name: string, perSecond: number, reason: string) => ({
    routing,
    provider: { id, slug: id, name },
    unitPrice: perSecond * seconds,
    price: perSecond * seconds,
    dropped: [],
    reason,
    error: null,
  });
  const rows =
    request.size === '1080p'
      ? ['optimal', 'cheapest', 'compatible'].map((m) =>
          row(m, 'local-prism', 'Local Prism', 0.023, 'cheapest provider that honours every parameter'),
        )
      : [
          row('optimal', 'local-studio', 'Local Studio', 0.02, 'Local Studio: supports more, for 10 % more'),
          row('cheapest', 'local-swift', 'Local Swift', 0.01, 'cheapest provider that honours every parameter'),
          row('compatible', 'local-studio', 'Local Studio', 0.02, 'honours every parameter given'),
        ];
  return { model: 'local/motion:2', media: 'video', count: 1, routing: 'optimal', pinned: null, rows };
}

beforeEach(() => {
  localStorage.clear();
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [motion, other, imageModel()] });
  ipc.providers.list.mockResolvedValue({
    providers: ['swift', 'studio', 'prism'].map((slug) => ({
      id: `local-${slug}`,
      slug,
      name: `Local ${slug[0]!.toUpperCase()}${slug.slice(1)}`,
      status: 'available',
      models: [],
      features: [],
    })),
  });
  // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the fake of an async IPC route
  ipc.compose.preview.mockImplementation((request: { size?: string; duration?: number }) =>
    Promise.resolve(previewOf(request)),
  );
});
afterEach(cleanup);

const selected = () => within(screen.getByRole('listbox', { name: 'Model' })).getByRole('option', { selected: true });

describe('Compose preselects a model', () => {
  it('the first of the kind, so the Image tab with one model can generate at once', async () => {
    renderOpenCompose();
    await waitFor(() => expect(selected().getAttribute('aria-label')).toMatch(/^Motion/));
    fireEvent.click(screen.getByRole('radio', { name: 'Image' }));
    await waitFor(() => expect(selected().getAttribute('aria-label')).toMatch(/^Stills/));
    fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'a red kite' } });
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Generate' }).disabled).toBe(false);
  });

  it('the last one generated with for the kind, after a restart too', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    renderOpenCompose();
    fireEvent.click(await screen.findByRole('option', { name: /^Other/ }));
    fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'sunrise' } });
    fireEvent.click(screen.getByRole('button', { name: 'Generate' }));
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    cleanup();
    // The app opens again: a fresh store reads what the last run saved.
    useCompose.getState().reset();
    useModels.getState().reset();
    useCompose.setState({ lastModel: JSON.parse(localStorage.getItem('clipdesk.compose.lastModel')!) as object });
    renderOpenCompose();
    await waitFor(() => expect(selected().getAttribute('aria-label')).toMatch(/^Other/));
  });
});

describe('the first estimate against the model card', () => {
  it('says the size puts it above the card’s “from” price, and says once what every routing card shares', async () => {
    renderOpenCompose();
    const card = await screen.findByRole('option', { name: /^Motion/ });
    expect(card.textContent).toContain('from $0.010 / s');
    fireEvent.click(card);
    await waitFor(() => expect(screen.getByLabelText('Estimated price').textContent).toContain('$0.092'));
    expect(screen.getByTestId('estimate-why').textContent).toBe(
      'Above the model’s “from $0.010 / s”: only Local Prism renders 1080p ($0.023 / s)',
    );
    // Three cards alike: the explanation is said once, not on each card.
    expect(screen.getByTestId('route-shared').textContent).toBe(
      'Every mode picks the same provider: only Local Prism renders 1080p',
    );
    for (const mode of ['optimal', 'cheapest', 'compatible'])
      expect(within(screen.getByTestId(`route-${mode}`)).queryByText(/honours every parameter/)).toBeNull();

    // At 720p the cards differ: each explains itself, and the estimate is at the card's price.
    fireEvent.change(screen.getByLabelText('Size'), { target: { value: '720p' } });
    await waitFor(() => expect(screen.getByLabelText('Estimated price').textContent).toContain('$0.080'));
    expect(screen.queryByTestId('estimate-why')).toBeNull();
    expect(screen.queryByTestId('route-shared')).toBeNull();
    expect(within(screen.getByTestId('route-cheapest')).getByText(/honours every parameter/)).toBeTruthy();
  });
});
