import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, waitFor, within } from '@testing-library/react';
import type { Job } from '../../../../shared/ipc/index.ts';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';
import { renderJobRow } from './job-row-render.tsx';

// Queue → Edit on a failed job reopens Compose on exactly what the job asked for: its model and
// version, its provider or routing mode, its parameters. What is no longer offered is named, and
// Compose never quietly switches to another model (the one last used) in its place.
let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:01:00.000Z');

const motion = model({ id: 'mdl_motion', base: 'clipdesk', slug: 'motion', name: 'Motion', versions: ['1'] });
const kling = model({
  id: 'mdl_kling',
  base: 'fal',
  slug: 'kling-video',
  name: 'Kling',
  version: '2.1',
  versions: ['1.6', '2.1'],
  parameters: {
    duration: { min: 5, max: 10, default: 5 },
    size: { values: ['720p', '1080p'], default: '720p' },
    cfg_scale: { type: 'number', min: 0, max: 1, default: 0.5 },
  },
  providers: [
    { id: 'fal', slug: 'fal', price: 0.07, features: ['text_to_video'] },
    { id: 'replicate', slug: 'replicate', price: 0.08, features: ['text_to_video'] },
  ],
});

beforeEach(() => {
  ipc = installFakeIpc();
  useQueue.getState().reset();
  useCompose.getState().reset();
  useShell.getState().reset();
  useModels.getState().reset();
  // The creator last generated with Motion: Compose's preselection would open on it.
  useCompose.setState({ lastModel: { video: 'mdl_motion' } });
});
afterEach(cleanup);

function failedKling(over: Partial<Job['request']> = {}): Job {
  return job({
    state: 'failed',
    error: { code: 'provider_error', message: 'the provider gave up' },
    request: {
      kind: 'video',
      prompt: 'a fox in the rain',
      model: 'fal/kling-video:1.6',
      provider: 'replicate',
      routing: 'optimal',
      public: false,
      duration: 10,
      size: '1080p',
      seed: 42,
      parameters: { cfg_scale: 0.7 },
      ...over,
    },
  });
}

function clickEdit(j: Job): void {
  const li = renderJobRow(j, { now: NOW });
  fireEvent.click(within(li).getByRole('button', { name: 'Edit' }));
}

describe('Edit on a failed job', () => {
  it('restores the exact model, version, provider and parameters', async () => {
    useModels.setState({ status: 'ready', models: [motion, kling], catalog: [motion, kling] });
    clickEdit(failedKling());
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    const s = useCompose.getState();
    expect(s.modelId).toBe('mdl_kling');
    expect(s.version).toBe('1.6');
    expect(s.provider).toBe('replicate');
    expect(s.params).toMatchObject({ duration: 10, size: '1080p', seed: 42, public: false });
    expect(s.modelParams).toEqual({ cfg_scale: 0.7 });
    expect(s.prompt).toBe('a fox in the rain');
    expect(s.restoreNotice).toBeNull();
    // Compose's preselection leaves the restored model alone.
    useCompose.getState().preselect([motion, kling]);
    expect(useCompose.getState().modelId).toBe('mdl_kling');
  });

  it('restores a routing mode when the job was not pinned to a provider', async () => {
    useModels.setState({ status: 'ready', models: [motion, kling], catalog: [motion, kling] });
    useCompose.getState().setRouting('optimal');
    clickEdit(failedKling({ provider: undefined, routing: 'cheapest', model: 'fal/kling-video' }));
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    const s = useCompose.getState();
    expect(s.modelId).toBe('mdl_kling');
    expect(s.version).toBeNull();
    expect(s.provider).toBeNull();
    expect(s.routing).toBe('cheapest');
  });

  it('loads the models first when Compose was never opened', async () => {
    ipc.models.list.mockResolvedValue({ models: [motion, kling] });
    ipc.providers.list.mockResolvedValue({ providers: [] });
    clickEdit(failedKling());
    await waitFor(() => expect(useCompose.getState().modelId).toBe('mdl_kling'));
    expect(useCompose.getState().version).toBe('1.6');
  });

  it('says which model is no longer available and does not pick another', async () => {
    useModels.setState({ status: 'ready', models: [motion], catalog: [motion] });
    clickEdit(failedKling());
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    const s = useCompose.getState();
    expect(s.restoreNotice).toMatch(/fal\/kling-video.*no longer available/);
    useCompose.getState().preselect([motion]);
    expect(useCompose.getState().modelId).not.toBe('mdl_motion');
  });

  it('says which version and provider are no longer offered', async () => {
    const newer = { ...kling, versions: ['2.1'], providers: kling.providers!.slice(0, 1) };
    useModels.setState({ status: 'ready', models: [motion, newer], catalog: [motion, newer] });
    clickEdit(failedKling());
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    const s = useCompose.getState();
    expect(s.modelId).toBe('mdl_kling');
    expect(s.restoreNotice).toMatch(/version 1\.6/);
    expect(s.restoreNotice).toMatch(/replicate/);
    expect(s.version).toBeNull();
    expect(s.provider).toBeNull();
  });
});

describe('Edit while the models cannot be loaded', () => {
  it('says the list failed rather than that the model is gone', async () => {
    ipc.models.list.mockRejectedValue(new Error('the service did not answer'));
    ipc.providers.list.mockResolvedValue({ providers: [] });
    clickEdit(failedKling());
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    expect(useCompose.getState().restoreNotice).toMatch(/Could not load the models.*fal\/kling-video/);
    expect(useCompose.getState().modelId).toBeNull();
  });
});

describe('Edit restores the frames', () => {
  it("puts the job's start and end frames back in their slots, and a submit sends them as the job did", async () => {
    const hailuo = model({
      id: 'mdl_hailuo',
      base: 'minimax',
      slug: 'hailuo-02',
      name: 'Hailuo',
      versions: ['1'],
      parameters: { ...model().parameters, end_image_url: { type: 'image' } },
    });
    useModels.setState({ status: 'ready', models: [motion, hailuo], catalog: [motion, hailuo] });
    const startFrame = { kind: 'path' as const, path: '/frames/start.png' };
    const endFrame = { kind: 'url' as const, url: 'http://127.0.0.1:1/v1/uploads/upl_end' };
    clickEdit(failedKling({ model: 'minimax/hailuo-02', provider: undefined, parameters: {}, startFrame, endFrame }));
    await waitFor(() => expect(useShell.getState().screen).toBe('compose'));
    const s = useCompose.getState();
    expect(s.startFrame).toMatchObject({ source: 'job', frame: startFrame, name: 'start.png' });
    expect(s.endFrame).toMatchObject({ source: 'job', frame: endFrame, previewUrl: endFrame.url });

    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    await useCompose.getState().generate(hailuo);
    const sent = ipc.jobs.submitBatch.mock.calls[0]![0] as { request: Record<string, unknown> };
    expect(sent.request).toMatchObject({ startFrame, endFrame });
  });
});
