// Defects seen when the app was tried as a new user would: each test below failed
// before its fix (the retention texts contradicted each other, "Download again" and "Open in
// Library" did nothing useful, filters said "Nothing here yet", …).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import type { ProviderRecord } from '../../../../shared/api/model-records.ts';
import type { LibraryItem } from '../../../../shared/ipc/index.ts';
import { ParametersForm } from '../../../../renderer/src/features/compose/components/ParametersForm.tsx';
import { useCompose } from '../../../../renderer/src/stores/compose/index.ts';
import { buildRequest } from '../../../../renderer/src/stores/compose/selectors.ts';
import { DetailPanel } from '../../../../renderer/src/features/library/components/DetailPanel.tsx';
import { LibraryScreen } from '../../../../renderer/src/features/library/components/LibraryScreen.tsx';
import { LibraryTile } from '../../../../renderer/src/features/library/components/LibraryTile.tsx';
import { useLibrary } from '../../../../renderer/src/stores/library/index.ts';
import { formatDeletionDate, retentionView } from '../../../../renderer/src/stores/library/retention.ts';
import { useModels } from '../../../../renderer/src/stores/models/index.ts';
import { JobRow } from '../../../../renderer/src/features/queue/components/JobRow.tsx';
import { useQueue } from '../../../../renderer/src/features/queue/store/index.ts';
import { useToasts } from '../../../../renderer/src/stores/toasts/index.ts';
import { IpcError } from '../../../../renderer/src/lib/ipc.ts';
import { useShell } from '../../../../renderer/src/lib/shell/index.ts';
import { installFakeIpc, job, libraryItem, model, type FakeIpc } from '../fixtures.ts';

let ipc: FakeIpc;
const NOW = Date.parse('2026-01-01T00:00:00.000Z');

const provider = (id: string, name: string): ProviderRecord => ({
  id,
  slug: id,
  name,
  status: 'available',
  models: [],
  features: [],
});

beforeEach(() => {
  ipc = installFakeIpc();
  useLibrary.getState().reset();
  useCompose.getState().reset();
  useModels.getState().reset();
  useQueue.getState().reset();
  useShell.getState().reset();
  useToasts.getState().reset();
});
afterEach(cleanup);

const details = () => screen.getByRole('complementary', { name: 'Item details' });
const actions = () => within(details()).getByRole('group', { name: 'Actions' });

function tile(entry: LibraryItem, now = NOW) {
  const { container } = render(
    <LibraryTile
      entry={entry}
      index={0}
      selected={false}
      open={false}
      focused={false}
      now={now}
      onActivate={() => {}}
    />,
  );
  return container.querySelector<HTMLElement>('[data-testid="retention"]')!.textContent;
}

describe('retention says one true thing everywhere', () => {
  it('a downloaded clip is kept: no "Download or keep it", no Keep, and the tile agrees', () => {
    const entry = libraryItem(7, { localPath: '/downloads/m_7.mp4' });
    expect(tile(entry)).toBe('Downloaded');
    cleanup();
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    expect(within(details()).getByTestId('retention-notice').textContent).toBe(
      'Downloaded, so it is kept: the service does not delete it.',
    );
    expect(within(details()).queryByText(/Download or keep/)).toBeNull();
    expect(within(actions()).queryByRole('button', { name: 'Keep' })).toBeNull();
    expect(within(actions()).getByRole('button', { name: 'Download again' })).toBeTruthy();
  });

  it('a clip not downloaded is deleted on its date unless kept, in the tile and the detail alike', () => {
    const entry = libraryItem(7); // deadline 2026-01-05T00:00Z
    const deadline = Date.parse(entry.retentionDeadline!);
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    expect(within(details()).getByTestId('retention-notice').textContent).toBe(
      `Deleted by the service on ${formatDeletionDate(deadline)} unless kept.`,
    );
    expect(within(actions()).getByRole('button', { name: 'Keep' })).toBeTruthy();
    cleanup();
    expect(tile(entry)).toMatch(/^Deleted (in \d+ days|tomorrow|today)$/);
  });

  it('where the retention guard will download the clip, the notice says so too', () => {
    const entry = libraryItem(7);
    const guard = 'The retention guard downloads it before then.';
    expect(retentionView(entry, NOW, 'mine').notice).toMatch(new RegExp(`unless kept\\. ${guard}$`));
    expect(retentionView(entry, NOW, 'favourites').notice).not.toContain(guard);
    expect(retentionView({ ...entry, favourite: true }, NOW, 'favourites').notice).toContain(guard);
    expect(retentionView(entry, NOW, 'off').notice).not.toContain(guard);
  });

  it('a retained clip reads "Kept" and offers no Keep', () => {
    const entry = libraryItem(2, { retentionDeadline: null });
    expect(tile(entry)).toBe('Kept');
    cleanup();
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    expect(within(details()).getByTestId('retention-notice').textContent).toBe('Kept: the service does not delete it.');
    expect(within(actions()).queryByRole('button', { name: 'Keep' })).toBeNull();
  });

  it('the day count does not change when the clock moves on by a minute (it read 91, then 90)', () => {
    // A 90-day deadline of a clip made a minute after the screen read the clock.
    const created = NOW + 60_000;
    const entry = libraryItem(1, { retentionDeadline: new Date(created + 90 * 86_400_000).toISOString() });
    const before = tile(entry, NOW);
    cleanup();
    const after = tile(entry, created + 60_000);
    expect(before).toBe('Deleted in 90 days');
    expect(after).toBe(before);
  });
});

describe('names and sizes in the library detail', () => {
  it('model and provider under the catalog’s names; the clip’s own size, the other formats apart', () => {
    useModels.setState({ catalog: [model()], providers: [provider('p_full', 'Full Studio (procedural)')] });
    const entry = libraryItem(4);
    entry.item = {
      ...entry.item,
      bytes: 3_000_000 + 1_000_000 + 50_000, // mp4 + webm + thumbnail
      formats: [
        { mime: 'video/mp4', url: 'http://127.0.0.1:1/m_4.mp4', bytes: 3_000_000 },
        { mime: 'video/webm', url: 'http://127.0.0.1:1/m_4.webm', bytes: 1_000_000 },
      ],
    };
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    const meta = within(details()).getByText('File').parentElement!;
    expect(within(meta).getByText('3.0 MB (MP4)')).toBeTruthy();
    expect(within(meta).getByText('WEBM 1.0 MB')).toBeTruthy();
    expect(within(meta).queryByText(/4\.1 MB/)).toBeNull();
    // `local/waves:2` and `local/waves` are one model, named as Compose names it.
    expect(within(meta).getByText('Waves v2')).toBeTruthy();
    expect(within(meta).getByText('Full Studio (procedural)')).toBeTruthy();
    cleanup();
    const { container } = render(
      <LibraryTile
        entry={entry}
        index={0}
        selected={false}
        open={false}
        focused={false}
        now={NOW}
        onActivate={() => {}}
      />,
    );
    expect(container.querySelector('.tile-sub')!.textContent).toBe('Waves · Full Studio (procedural)');
  });
});

describe('"Download again"', () => {
  it('downloads the item anew and says where it went', async () => {
    const entry = libraryItem(7, { localPath: '/old/m_7.mp4' });
    useLibrary.setState({ items: [entry], detailId: 'm_7', status: 'ready', total: 1 });
    ipc.library.downloadAgain.mockResolvedValue({ ...entry, localPath: '/downloads/m_7.mp4' });
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    fireEvent.click(within(actions()).getByRole('button', { name: 'Download again' }));
    await waitFor(() => expect(useToasts.getState().toasts).toHaveLength(1));
    expect(ipc.library.downloadAgain).toHaveBeenCalledWith({ id: 'm_7' });
    expect(ipc.library.download).not.toHaveBeenCalled();
    expect(useToasts.getState().toasts[0]).toMatchObject({
      tone: 'success',
      title: 'Downloaded again',
      message: '/downloads/m_7.mp4',
    });
    expect(useLibrary.getState().items[0]?.localPath).toBe('/downloads/m_7.mp4');
  });

  it('says plainly why it could not', async () => {
    const entry = libraryItem(7, { localPath: '/old/m_7.mp4' });
    ipc.library.downloadAgain.mockRejectedValue(
      new IpcError({
        code: 'not_found_error',
        message:
          'The service no longer has this item, so it cannot be downloaded again. The copy already on disk is kept.',
      }),
    );
    render(<DetailPanel entry={entry} now={NOW} feed={false} />);
    fireEvent.click(within(actions()).getByRole('button', { name: 'Download again' }));
    await waitFor(() => expect(useToasts.getState().toasts).toHaveLength(1));
    expect(useToasts.getState().toasts[0]).toMatchObject({
      tone: 'error',
      title: 'Could not download again',
      message: expect.stringContaining('no longer has this item') as string,
    });
  });
});

describe('the queue', () => {
  it('each variation shows its own seed, and names the model and provider as the catalog does', () => {
    useModels.setState({ catalog: [model()], providers: [provider('p_full', 'Full Studio (procedural)')] });
    const seeds = [41, 42];
    render(
      <ul>
        {seeds.map((seed, i) => (
          <JobRow
            key={seed}
            job={job({ id: `job_${i}`, request: { ...job().request, prompt: `v${i}`, seed, provider: 'p_full' } })}
            index={i}
            queuedCount={2}
            now={NOW}
          />
        ))}
      </ul>,
    );
    expect(screen.getAllByTestId('job-seed').map((e) => e.textContent)).toEqual(['seed 41', 'seed 42']);
    const first = screen.getByRole('listitem', { name: 'Job: v0' });
    expect(within(first).getByText('Waves')).toBeTruthy();
    expect(within(first).getByText('pinned: Full Studio (procedural)')).toBeTruthy();
  });

  it('"Open in Library" opens the Library with the job’s clip in the detail', async () => {
    const entry = libraryItem(9);
    ipc.library.get.mockResolvedValue(entry);
    useLibrary.setState({ filters: { ...useLibrary.getState().filters, publicFeed: false } });
    const done = job({
      state: 'done',
      position: null,
      finishedAt: '2026-01-01T00:00:30.000Z',
      result: { itemIds: ['m_9'], price: 0.04, paths: [] },
    });
    render(
      <ul>
        <JobRow job={done} index={null} queuedCount={0} now={NOW} />
      </ul>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Open in Library' }));
    expect(useShell.getState().screen).toBe('library');
    await waitFor(() => expect(useLibrary.getState().detailId).toBe('m_9'));
    expect(ipc.library.get).toHaveBeenCalledWith({ id: 'm_9' });
    expect(useLibrary.getState().detailExtra?.item.id).toBe('m_9');
  });
});

describe('the seed field', () => {
  it('every model has one; a seed typed there goes into the request', () => {
    const m = model();
    act(() => useCompose.getState().selectModel(m));
    render(<ParametersForm model={m} />);
    const seed = screen.getByLabelText('Seed');
    expect(screen.getByText('Each job gets a random seed; variations get consecutive ones.')).toBeTruthy();
    fireEvent.change(seed, { target: { value: '1234' } });
    expect(useCompose.getState().params.seed).toBe(1234);
    expect(screen.getByText(/×3 uses seeds 1234–1236/)).toBeTruthy();
    act(() => useCompose.getState().setPrompt('waves'));
    expect(buildRequest(useCompose.getState(), m).seed).toBe(1234);
    fireEvent.change(seed, { target: { value: 'abc' } });
    expect(seed.getAttribute('aria-invalid')).toBe('true');
    expect(useCompose.getState().params.seed).toBeUndefined();
    fireEvent.change(seed, { target: { value: '' } });
    expect(seed.getAttribute('aria-invalid')).toBe('false');
  });
});

describe('an empty library versus filters that match nothing', () => {
  it('filters with no match say so and clear; a truly empty library invites to compose', async () => {
    ipc.library.query.mockResolvedValue({ items: [], total: 0, nextCursor: null });
    ipc.library.sync.mockResolvedValue({ added: 0, updated: 0, removed: 0, requests: 1 });
    ipc.models.list.mockResolvedValue({ models: [] });
    ipc.providers.list.mockResolvedValue({ providers: [] });
    useLibrary.setState({ filters: { ...useLibrary.getState().filters, media: 'image', search: 'cat' } });
    render(<LibraryScreen />);
    await screen.findByRole('heading', { name: 'No item matches the filters' });
    expect(screen.queryByText('Nothing here yet')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Compose something' })).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await screen.findByRole('heading', { name: 'Nothing here yet' });
    expect(ipc.library.query).toHaveBeenLastCalledWith({ sort: 'newest', limit: 500, origin: 'takes' });
    expect(screen.getByRole('button', { name: 'Compose something' })).toBeTruthy();
  });
});
