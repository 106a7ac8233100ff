import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Job } from '../../../../shared/ipc/index.ts';
import { useStage } from '../../../../renderer/src/stores/stage/index.ts';
import {
  makeVariations,
  reroll,
  rerollRequest,
  variationsRequest,
} from '../../../../renderer/src/stores/stage/actions.ts';
import {
  MAX_COMPARE,
  sessionTakes,
  stageTake,
  takeUnitPrice,
  toggleCompared,
  variationsPrice,
  type StageEntry,
} from '../../../../renderer/src/stores/stage/takes.ts';
import { noticeJobChange } from '../../../../renderer/src/stores/stage/notices.ts';
import { useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { installFakeIpc, job, libraryItem, type FakeIpc } from '../fixtures.ts';

const done = (id: string, itemIds: string[], over: Partial<Job> = {}): Job =>
  job({ id, state: 'done', result: { itemIds, price: 0.1 * itemIds.length, paths: [] }, ...over });
const jobsOf = (...list: Job[]) => Object.fromEntries(list.map((j) => [j.id, j]));
const entries = (...ids: string[]): StageEntry[] => ids.map((id) => ({ kind: 'job', id }));

let ipc: FakeIpc;
beforeEach(() => {
  ipc = installFakeIpc();
  useStage.getState().reset();
});

describe('the session filmstrip', () => {
  it('lists takes newest first, a running job as one pending take', () => {
    const takes = sessionTakes(entries('a', 'b'), jobsOf(done('a', ['m_1']), job({ id: 'b' })), {});
    expect(takes.map((t) => t.key)).toEqual(['job:b', 'm_1']);
    expect(takes[0]!.itemId).toBeNull();
  });

  it('stacks variations under their source, pending or done, and keeps an orphan variation on its own', () => {
    const source = done('a', ['m_1']);
    const pending = job({ id: 'v1', request: { ...job().request, variationOf: 'm_1', variations: 2 } });
    const finished = done('v2', ['m_2', 'm_3'], { request: { ...job().request, variationOf: 'm_1', variations: 2 } });
    const orphan = done('v3', ['m_9'], { request: { ...job().request, variationOf: 'm_gone', variations: 1 } });
    const takes = sessionTakes(entries('a', 'v1', 'v2', 'v3'), jobsOf(source, pending, finished, orphan), {});
    expect(takes.map((t) => t.key)).toEqual(['m_9', 'm_1']);
    expect(takes[1]!.variations.map((t) => t.key)).toEqual(['m_2', 'm_3', 'job:v1']);
  });

  it('adds an item opened from the Library once, beside the jobs of the session', () => {
    const opened: StageEntry = { kind: 'item', id: 'm_1' };
    const takes = sessionTakes([{ kind: 'job', id: 'a' }, opened, opened], jobsOf(done('a', ['m_1'])), {
      m_1: libraryItem(1),
    });
    expect(takes.map((t) => t.key)).toEqual(['m_1']);
    expect(takes[0]!.item?.item.id).toBe('m_1');
  });
});

describe('the stage', () => {
  it('shows the newest take, a focused job (its first item once done), or a focused item', () => {
    const takes = sessionTakes(entries('a', 'b'), jobsOf(done('a', ['m_1']), done('b', ['m_2', 'm_3'])), {});
    expect(stageTake(takes, null)?.key).toBe('m_2');
    expect(stageTake(takes, { kind: 'job', id: 'a' })?.key).toBe('m_1');
    expect(stageTake(takes, { kind: 'item', id: 'm_3' })?.key).toBe('m_3');
    expect(stageTake([], null)).toBeNull();
  });

  it('Generate puts its job on the stage; Variations leave the source there', () => {
    const stage = useStage.getState();
    stage.showItem(libraryItem(1));
    stage.addJobs([job({ id: 'v' })], false);
    expect(useStage.getState().focus).toEqual({ kind: 'item', id: 'm_1' });
    stage.addJobs([job({ id: 'g' })], true);
    expect(useStage.getState().focus).toEqual({ kind: 'job', id: 'g' });
    expect(useStage.getState().entries.map((e) => e.id)).toEqual(['m_1', 'v', 'g']);
  });
});

describe('job events', () => {
  it('a take follows its job’s events, and an event that overtook the submit’s answer is kept', () => {
    const stage = useStage.getState();
    stage.updateJob(done('fast', ['m_1']));
    stage.addJobs([job({ id: 'fast' })], true);
    expect(useStage.getState().submitted['fast']?.state).toBe('done');
    stage.addJobs([job({ id: 'slow' })], true);
    stage.updateJob(done('slow', ['m_2']));
    const s = useStage.getState();
    expect(sessionTakes(s.entries, s.submitted, s.items).map((t) => t.key)).toEqual(['m_2', 'm_1']);
  });
});

describe('notices', () => {
  it('a finished job says so with Show on stage; a held job says why once', async () => {
    useToasts.setState({ toasts: [] });
    noticeJobChange(job({ id: 'n1', state: 'generating' }), done('n1', ['m_1']));
    const ready = useToasts.getState().toasts.at(-1)!;
    expect(ready).toMatchObject({ title: 'Take ready', action: { label: 'Show on stage' } });
    ipc.library.get.mockResolvedValue(libraryItem(1));
    ready.action!.run();
    await vi.waitFor(() => expect(useStage.getState().focus).toEqual({ kind: 'item', id: 'm_1' }));

    const held = job({ id: 'h1', hold: { reason: 'budget', message: 'Over today’s $5 cap', until: null } });
    noticeJobChange(job({ id: 'h1' }), held);
    noticeJobChange(held, held);
    expect(
      useToasts
        .getState()
        .toasts.filter((t) => t.title === 'Job held')
        .map((t) => t.message),
    ).toEqual(['Over today’s $5 cap']);
  });
});

describe('prices on the take buttons', () => {
  it('uses the item price, else the job charge per item, else its routed price', () => {
    expect(takeUnitPrice({ job: null, item: libraryItem(1, { item: { ...libraryItem(1).item, price: 0.25 } }) })).toBe(
      0.25,
    );
    expect(takeUnitPrice({ job: done('a', ['m_1', 'm_2']), item: null })).toBeCloseTo(0.1);
    const routed = job({ route: { routing: 'optimal', providerId: 'p', providerName: 'P', price: 0.3, dropped: [] } });
    expect(takeUnitPrice({ job: routed, item: null })).toBe(0.3);
    expect(variationsPrice({ job: routed, item: null }, 3)).toBeCloseTo(0.9);
    expect(variationsPrice({ job: job(), item: null }, 3)).toBeNull();
  });
});

describe('side by side', () => {
  it('toggles takes in and out, never more than four', () => {
    let picked: string[] = [];
    for (const id of ['a', 'b', 'c', 'd', 'e']) picked = toggleCompared(picked, id);
    expect(picked).toEqual(['a', 'b', 'c', 'd']);
    expect(MAX_COMPARE).toBe(4);
    expect(toggleCompared(picked, 'b')).toEqual(['a', 'c', 'd']);
  });

  it('plays side by side only with two or more ticked', () => {
    useStage.getState().toggleCompare('m_1');
    useStage.getState().setComparing(true);
    expect(useStage.getState().comparing).toBe(false);
    useStage.getState().toggleCompare('m_2');
    useStage.getState().setComparing(true);
    expect(useStage.getState().comparing).toBe(true);
    useStage.getState().toggleCompare('m_2');
    expect(useStage.getState().comparing).toBe(false);
  });
});

describe('take actions go through the one submit route', () => {
  it('Re-roll sends the same request without its seed, and the new take goes on the stage', async () => {
    const take = { job: done('a', ['m_1'], { request: { ...job().request, seed: 42, size: '360p' } }), item: null };
    expect(rerollRequest(take)).toEqual({ ...job().request, size: '360p' });
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'r' })] });
    await reroll({ ...take, key: 'm_1', jobId: 'a', itemId: 'm_1', sourceId: null, variations: [] });
    expect(ipc.jobs.submitBatch).toHaveBeenCalledWith({ request: { ...job().request, size: '360p' }, count: 1 });
    expect(ipc.jobs.submit).not.toHaveBeenCalled();
    expect(useStage.getState().focus).toEqual({ kind: 'job', id: 'r' });
  });

  it('Variations ×N is one job of N videos of the item, and needs a finished video', async () => {
    const entry = libraryItem(7);
    expect(variationsRequest({ job: null, item: null }, 2)).toBeNull();
    expect(variationsRequest({ job: null, item: entry }, 3)).toEqual({
      kind: 'video',
      model: 'local/waves',
      prompt: 'prompt number 7',
      variationOf: 'm_7',
      variations: 3,
    });
    ipc.jobs.submitBatch.mockResolvedValue({ jobs: [job({ id: 'v' })] });
    await makeVariations(
      { key: 'm_7', jobId: null, itemId: 'm_7', job: null, item: entry, sourceId: null, variations: [] },
      3,
    );
    expect(ipc.jobs.submitBatch.mock.calls[0]![0]).toMatchObject({ count: 1, request: { variationOf: 'm_7' } });
    expect(useStage.getState().entries).toEqual([{ kind: 'job', id: 'v' }]);
    expect(useStage.getState().focus).toBeNull();
  });
});
