import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { SubmitAtControl } from '../../../../renderer/src/features/compose/components/SubmitAtControl.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { installFakeIpc, job, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;

beforeEach(() => {
  ipc = installFakeIpc();
  useCompose.getState().reset();
});
afterEach(cleanup);

describe('Submit at…', () => {
  it('the datetime-local value becomes the ISO time of the next submission, then clears', async () => {
    render(<SubmitAtControl />);
    const input = screen.getByLabelText<HTMLInputElement>('Submit at…');
    fireEvent.change(input, { target: { value: '2030-05-06T07:08' } });
    const at = new Date('2030-05-06T07:08').toISOString();
    expect(useCompose.getState().submitAt).toBe(at);
    expect(input.value).toBe('2030-05-06T07:08');

    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'j1' })] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('at dawn');
    expect(await useCompose.getState().generate(m)).toEqual(['j1']);
    expect(ipc.jobs.submit).not.toHaveBeenCalled();
    expect(ipc.jobs.submitBatch.mock.calls[0]![0]).toMatchObject({
      count: 1,
      submitAt: at,
      request: { prompt: 'at dawn' },
    });
    expect(useCompose.getState().submitAt).toBeNull();
  });

  it('a batch carries the time; × goes back to submitting at once', async () => {
    render(<SubmitAtControl />);
    fireEvent.change(screen.getByLabelText('Submit at…'), { target: { value: '2030-05-06T07:08' } });
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'a' }), job({ id: 'b' })] });
    const m = model();
    useCompose.getState().selectModel(m);
    useCompose.getState().setPrompt('two at dawn');
    await useCompose.getState().generate(m, 2);
    expect(ipc.jobs.submitBatch.mock.calls[0]![0]).toMatchObject({ count: 2, submitAt: expect.any(String) });

    fireEvent.change(screen.getByLabelText('Submit at…'), { target: { value: '2030-05-06T07:08' } });
    fireEvent.click(screen.getByRole('button', { name: 'Submit at once instead' }));
    expect(useCompose.getState().submitAt).toBeNull();
  });
});
