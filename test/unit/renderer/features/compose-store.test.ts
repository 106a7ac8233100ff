import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PREVIEW_DEBOUNCE_MS, useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import type { StartFrame } from '../../../../renderer/src/stores/compose/initialState.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

function fileFrame(bytes: number, name = 'frame.png', mime = 'image/png'): StartFrame {
  const file = new File([new Uint8Array(Math.min(bytes, 16))], name, { type: mime });
  Object.defineProperty(file, 'size', { value: bytes });
  return { source: 'file', file, name, bytes, mime, previewUrl: 'blob:preview' };
}

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
  localStorage.clear();
  vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:x'), revokeObjectURL: vi.fn() }));
});
afterEach(() => vi.unstubAllGlobals());

describe('compose store', () => {
  it('selecting a model applies its defaults and keeps the public choice', () => {
    useCompose.getState().setParam('public', true);
    useCompose.getState().selectModel(model());
    const s = useCompose.getState();
    expect(s.modelId).toBe('mdl_a');
    expect(s.params).toEqual({ public: true, duration: 4, size: '720p' });
  });

  it('switching media clears a model of the other kind', () => {
    useCompose.getState().selectModel(model());
    useCompose.getState().setMedia('image');
    expect(useCompose.getState().modelId).toBeNull();
  });

  it('refuses a 21 MB start frame and never uploads it', () => {
    useCompose.getState().setStartFrame(fileFrame(21_000_000, 'huge.png'));
    const s = useCompose.getState();
    expect(s.startFrame).toBeNull();
    expect(s.startFrameError).toMatch(/huge\.png is 21 MB; start frames can be at most 20 MB/);
    expect(ipc.uploads.fromBytes).not.toHaveBeenCalled();
  });

  it('generates one job with the contract request, and records the prompt in history', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'j1' })] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('ocean at dusk');
    const ids = await useCompose.getState().generate(m);
    expect(ids).toEqual(['j1']);
    // The one submit route: a job request and a count, whatever the canvas asks for.
    expect(ipc.jobs.submitBatch).toHaveBeenCalledWith({
      request: {
        kind: 'video',
        model: 'local/waves',
        prompt: 'ocean at dusk',
        public: false,
        routing: 'optimal',
        duration: 4,
        size: '720p',
      },
      count: 1,
    });
    expect(ipc.jobs.submit).not.toHaveBeenCalled();
    expect(useCompose.getState().history[0]).toBe('ocean at dusk');
    expect(JSON.parse(localStorage.getItem('clipdesk.compose.history') ?? '[]')).toEqual(['ocean at dusk']);
  });

  it('Generate ×N submits a batch', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'a' }), job({ id: 'b' }), job({ id: 'c' })] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('three of these');
    expect(await useCompose.getState().generate(m, 3)).toEqual(['a', 'b', 'c']);
    expect(ipc.jobs.submitBatch.mock.calls[0]![0]).toMatchObject({ count: 3, request: { prompt: 'three of these' } });
  });

  it('does not submit past the prompt limit', async () => {
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('x'.repeat(501));
    expect(await useCompose.getState().generate(m)).toEqual([]);
    expect(ipc.jobs.submitBatch).not.toHaveBeenCalled();
    expect(useCompose.getState().submitError).toMatch(/500-character limit/);
  });

  it('uploads a dropped file as bytes in browser mode and sends it as the start frame', async () => {
    ipc.uploads.fromBytes.mockResolvedValue({
      mediaId: 'up1',
      url: 'http://svc/up1.png',
      mime: 'image/png',
      bytes: 10,
      width: 640,
      height: 360,
      reused: false,
      warnings: [],
    });
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'j2' })] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('from a still');
    useCompose.getState().setStartFrame(fileFrame(1000));
    await useCompose.getState().generate(m);
    expect(ipc.uploads.fromBytes).toHaveBeenCalledTimes(1);
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      startFrame: { kind: 'upload', mediaId: 'up1', url: 'http://svc/up1.png' },
    });
  });

  it('references a library item instead of uploading it', async () => {
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job()] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('continue');
    useCompose.getState().setStartFrame({ source: 'library', mediaId: 'm_9', name: 'x', previewUrl: 'http://t' });
    await useCompose.getState().generate(m);
    expect(ipc.jobs.submitBatch.mock.calls[0]![0].request).toMatchObject({
      startFrame: { kind: 'item', itemId: 'm_9' },
    });
    expect(ipc.uploads.fromBytes).not.toHaveBeenCalled();
  });

  it('keeps the service message when submission fails', async () => {
    const { IpcError } = await import('../../../../renderer/src/lib/ipc.ts');
    ipc.jobs.submitBatch.mockRejectedValue(
      new IpcError({ code: 'unsupported_parameter', message: 'No provider can honour style=noir' }),
    );
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('p');
    await expect(useCompose.getState().generate(m)).rejects.toThrow('No provider can honour style=noir');
    expect(useCompose.getState().submitError).toBe('No provider can honour style=noir');
    expect(useCompose.getState().submitting).toBe(false);
  });

  it('recalls history with Alt+Up/Down semantics', () => {
    useCompose.setState({ history: ['newest', 'older'] });
    useCompose.getState().recallHistory(-1);
    expect(useCompose.getState().prompt).toBe('newest');
    useCompose.getState().recallHistory(-1);
    expect(useCompose.getState().prompt).toBe('older');
    useCompose.getState().recallHistory(-1);
    expect(useCompose.getState().prompt).toBe('older');
    useCompose.getState().recallHistory(1);
    useCompose.getState().recallHistory(1);
    expect(useCompose.getState().prompt).toBe('');
  });

  it('the routing preview is asked once per burst of edits (debounced), and a stale answer is ignored', async () => {
    vi.useFakeTimers();
    try {
      const m = model();
      const answers: Array<(value: unknown) => void> = [];
      // eslint-disable-next-line @typescript-eslint/no-misused-promises -- the fake of an async IPC route
      ipc.compose.preview.mockImplementation(() => new Promise((resolve) => answers.push(resolve)));
      const s = () => useCompose.getState();
      s().selectModel(m);
      s().refreshPreview(m);
      s().setParam('duration', 6);
      s().refreshPreview(m);
      s().setParam('duration', 8);
      s().refreshPreview(m);
      await vi.advanceTimersByTimeAsync(PREVIEW_DEBOUNCE_MS);
      expect(ipc.compose.preview).toHaveBeenCalledTimes(1);
      expect(ipc.compose.preview.mock.calls[0]![0]).toMatchObject({ kind: 'video', duration: 8, routing: 'optimal' });
      // Only the mode changes: every row already covers it, so nothing is asked.
      s().setRouting('cheapest');
      s().refreshPreview(m);
      await vi.advanceTimersByTimeAsync(PREVIEW_DEBOUNCE_MS);
      expect(ipc.compose.preview).toHaveBeenCalledTimes(1);
      // A newer request before the first answer: the first answer, when it comes, is not shown.
      s().setParam('duration', 2);
      s().refreshPreview(m);
      await vi.advanceTimersByTimeAsync(PREVIEW_DEBOUNCE_MS);
      expect(ipc.compose.preview).toHaveBeenCalledTimes(2);
      answers[0]!({ stale: true });
      await vi.advanceTimersByTimeAsync(0);
      expect(s().preview).toMatchObject({ status: 'loading', data: null });
      const fresh = { model: 'local/waves:2', media: 'video', count: 1, routing: 'cheapest', pinned: null, rows: [] };
      answers[1]!(fresh);
      await vi.advanceTimersByTimeAsync(0);
      expect(s().preview).toMatchObject({ status: 'ready', data: fresh });
    } finally {
      vi.useRealTimers();
    }
  });
});
