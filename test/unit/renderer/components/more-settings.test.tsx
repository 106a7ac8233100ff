import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { renderOpenCompose } from './open-canvas.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

// Compose → "More settings": a model's own parameters from its record, as fields of their type,
// checked with the service's rule before anything is sent (docs/workflows.md). The two models
// are the hand-kept catalog's Kling 2.1 and Veo 3 (server/providers/catalog-file/models.json).
let ipc: FakeIpc;

const kling = model({
  id: 'kling/v2.1',
  base: 'kling',
  slug: 'v2.1',
  name: 'Kling 2.1',
  parameters: {
    duration: { min: 5, max: 10, default: 5, values: [5, 10] },
    size: { values: ['720p'], default: '720p' },
    image_url: { supported: true },
    aspect_ratio: { values: ['16:9', '9:16', '1:1'] },
    negative_prompt: { type: 'string', maxLength: 2500, description: 'What the clip should not show.' },
    cfg_scale: { type: 'number', min: 0, max: 1, description: 'How closely the clip follows the prompt (0 to 1).' },
  },
  providers: [
    {
      id: 'fal',
      slug: 'fal',
      name: 'fal',
      price: 0.05,
      features: ['text_to_video', 'image_to_video'],
      parameters: ['aspect_ratio', 'negative_prompt', 'cfg_scale'],
    },
    {
      id: 'replicate',
      slug: 'replicate',
      name: 'Replicate',
      price: 0.05,
      features: ['text_to_video', 'image_to_video'],
      parameters: ['negative_prompt'],
    },
  ],
});
const veo = model({
  id: 'google/veo-3',
  base: 'google',
  slug: 'veo-3',
  name: 'Veo 3',
  parameters: {
    duration: { min: 8, max: 8, default: 8, values: [8] },
    size: { values: ['720p', '1080p'], default: '1080p' },
    audio: { type: 'boolean', description: 'Ask for a soundtrack.' },
    aspect_ratio: { values: ['16:9', '9:16'] },
    negative_prompt: { type: 'string', maxLength: 2000, description: 'What the clip should not show.' },
  },
  providers: [
    {
      id: 'fal',
      slug: 'fal',
      name: 'fal',
      price: 0.4,
      features: ['text_to_video', 'audio'],
      parameters: ['aspect_ratio', 'negative_prompt'],
    },
  ],
});

beforeEach(() => {
  localStorage.clear();
  ipc = installFakeIpc();
  useCompose.getState().reset();
  useModels.getState().reset();
  ipc.models.list.mockResolvedValue({ models: [kling, veo] });
  ipc.providers.list.mockResolvedValue({ providers: [] });
  ipc.compose.preview.mockReturnValue(new Promise(() => {}));
  ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
});
afterEach(cleanup);

async function open(name: RegExp) {
  renderOpenCompose();
  fireEvent.click(await screen.findByRole('option', { name }));
  fireEvent.change(screen.getByLabelText('Prompt'), { target: { value: 'a lighthouse at dusk' } });
  const more = screen.getByText(/^More settings/).closest('details')!;
  fireEvent.click(within(more).getByText(/^More settings/));
  return more;
}
const generate = () => screen.getByRole<HTMLButtonElement>('button', { name: 'Generate' });
const help = (field: HTMLElement) => document.getElementById(field.getAttribute('aria-describedby')!)!.textContent;

describe('More settings', () => {
  it("shows the model's own parameters with their type, bounds, description and who ignores them", async () => {
    const more = await open(/^Kling 2.1/);
    expect(within(more).getByText('More settings (2)')).toBeTruthy();
    // aspect_ratio keeps its place in the main form.
    expect(screen.getByLabelText('Aspect ratio').tagName).toBe('SELECT');
    const negative = within(more).getByLabelText('Negative prompt');
    expect(negative.tagName).toBe('TEXTAREA');
    expect(help(negative)).toBe('What the clip should not show. Up to 2,500 characters.');
    const cfg = within(more).getByLabelText<HTMLInputElement>('CFG scale');
    expect([cfg.type, cfg.min, cfg.max, cfg.step]).toEqual(['number', '0', '1', '0.01']);
    expect(help(cfg)).toBe('How closely the clip follows the prompt (0 to 1). From 0 to 1. Ignored by Replicate.');
  });

  it('blocks Generate while a value breaks its rule, saying which field and the rule; a valid one travels with the job', async () => {
    const more = await open(/^Kling 2.1/);
    const cfg = within(more).getByLabelText('CFG scale');
    fireEvent.change(cfg, { target: { value: '2' } });
    expect(help(cfg)).toBe('CFG scale takes at most 1, not 2');
    expect(generate().disabled).toBe(true);
    expect(screen.getByText('CFG scale takes at most 1, not 2', { selector: '.generate-bar *' })).toBeTruthy();

    fireEvent.change(within(more).getByLabelText('Negative prompt'), { target: { value: 'x'.repeat(2501) } });
    fireEvent.change(cfg, { target: { value: '0.5' } });
    expect(generate().disabled).toBe(true);
    expect(help(within(more).getByLabelText('Negative prompt'))).toBe(
      'Negative prompt takes at most 2500 characters, not 2501',
    );
    fireEvent.change(within(more).getByLabelText('Negative prompt'), { target: { value: 'blur' } });
    expect(generate().disabled).toBe(false);
    fireEvent.click(generate());
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      model: 'kling/v2.1',
      aspect_ratio: '16:9',
      parameters: { negative_prompt: 'blur', cfg_scale: 0.5 },
    });
  });

  it('keeps what the next model also has, drops the rest, and offers a switch for a boolean', async () => {
    const more = await open(/^Kling 2.1/);
    fireEvent.change(within(more).getByLabelText('Negative prompt'), { target: { value: 'blur' } });
    fireEvent.change(within(more).getByLabelText('CFG scale'), { target: { value: '0.7' } });
    fireEvent.click(screen.getByRole('option', { name: /^Veo 3/ }));
    expect(useCompose.getState().modelParams).toEqual({ negative_prompt: 'blur' });
    const veoMore = screen.getByText(/^More settings/).closest('details')!;
    fireEvent.click(within(veoMore).getByText(/^More settings/));
    expect(within(veoMore).queryByLabelText('CFG scale')).toBeNull();
    expect(within(veoMore).getByLabelText<HTMLTextAreaElement>('Negative prompt').value).toBe('blur');
    const audio = within(veoMore).getByLabelText<HTMLInputElement>('Audio');
    expect([audio.type, audio.checked]).toEqual(['checkbox', false]);
    fireEvent.click(audio);
    fireEvent.click(generate());
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      model: 'google/veo-3',
      parameters: { negative_prompt: 'blur', audio: true },
    });
  });

  it('with a provider pinned, shows and sends only what that provider honours', async () => {
    const more = await open(/^Kling 2.1/);
    fireEvent.change(within(more).getByLabelText('CFG scale'), { target: { value: '0.3' } });
    fireEvent.change(screen.getByLabelText('Provider', { exact: true }), { target: { value: 'replicate' } });
    expect(within(more).queryByLabelText('CFG scale')).toBeNull();
    expect(within(more).getByText('More settings (1)')).toBeTruthy();
    fireEvent.click(generate());
    await waitFor(() => expect(ipc.jobs.submitBatch).toHaveBeenCalledTimes(1));
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).not.toHaveProperty('parameters');
  });
});
