import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

/** The dock's end-frame slot (docs/workflows.md, "The prompt dock"): only for a model with an image parameter. */

let ipc: FakeIpc;

const withEndFrame = model({
  id: 'mdl_end',
  slug: 'hailuo',
  name: 'Hailuo',
  parameters: {
    ...model().parameters,
    end_image_url: { type: 'image', description: 'The end frame.' },
  },
});

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [model(), withEndFrame] });
  ipc.providers.list.mockResolvedValue({ providers: [] });
  URL.createObjectURL = vi.fn(() => 'blob:x');
  URL.revokeObjectURL = vi.fn();
});
afterEach(cleanup);

async function pick(name: RegExp) {
  renderOpenCompose();
  fireEvent.click(await screen.findByRole('option', { name }));
}

const png = (name: string) => new File([new Uint8Array(8)], name, { type: 'image/png' });

describe('the end-frame slot', () => {
  it('is not shown for a model without an image parameter', async () => {
    await pick(/Waves/);
    expect(screen.getByRole('button', { name: /Start frame drop zone/ })).toBeTruthy();
    expect(screen.queryByRole('button', { name: /End frame drop zone/ })).toBeNull();
  });

  it('is shown beside the start frame for a model with one, and its parameter is no text field', async () => {
    await pick(/Hailuo/);
    expect(screen.getByRole('button', { name: /Start frame drop zone/ })).toBeTruthy();
    expect(screen.getByRole('button', { name: /End frame drop zone/ })).toBeTruthy();
    expect(screen.queryByLabelText(/end image url/i)).toBeNull();
  });

  it('takes a dropped image, needs a start frame, and goes out with the job', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    ipc.uploads.fromBytes.mockResolvedValue({ mediaId: 'upl_1', url: 'http://svc/v1/uploads/upl_1' });
    await pick(/Hailuo/);
    fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'the tide comes in' } });
    const end = screen.getByRole('button', { name: /End frame drop zone/ });
    fireEvent.drop(end, { dataTransfer: { files: [png('end.png')], getData: () => '' } });
    expect(await screen.findByRole('img', { name: 'End frame preview: end.png' })).toBeTruthy();
    expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Generate' }).disabled).toBe(true);

    const start = screen.getByRole('button', { name: /Start frame drop zone/ });
    fireEvent.drop(start, { dataTransfer: { files: [png('start.png')], getData: () => '' } });
    await waitFor(() =>
      expect(screen.getByRole<HTMLButtonElement>('button', { name: 'Generate' }).disabled).toBe(false),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Generate' }));
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    const sent = ipc.jobs.submitBatch.mock.calls[0]![0] as { request: Record<string, unknown> };
    expect(sent.request['startFrame']).toMatchObject({ kind: 'upload' });
    expect(sent.request['endFrame']).toMatchObject({ kind: 'upload' });
  });
});
