import { useState } from 'react';
import type { LibraryItem, LocalFile } from '../../../../../shared/ipc/index.ts';
import { ipc } from '../../../lib/ipc.ts';
import { toastError, toastSuccess } from '../../../stores/toasts/index.ts';
import { useChain } from './useChain.ts';
import { ExportedFile } from './ExportedFile.tsx';

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * In and out points on a video: export the trimmed clip (an MP4 in the download folder), or use
 * the trimmed clip as its shot in the chain: the sequence then plays only that part, and
 * "Continue this shot" starts from the out point.
 */
export function TrimControls({ entry }: { entry: LibraryItem }) {
  const { item } = entry;
  const chain = useChain(entry);
  const trim = chain?.shots.find((s) => s.itemId === item.id)?.trim ?? null;
  // What the creator typed, else the shot's trim in its chain (it arrives after the first render), else the whole clip.
  const [edited, setEdited] = useState<{ start?: number; end?: number }>({});
  const start = edited.start ?? trim?.start ?? 0;
  const end = edited.end ?? trim?.end ?? item.duration;
  const setStart = (n: number) => setEdited((e) => ({ ...e, start: n }));
  const setEnd = (n: number) => setEdited((e) => ({ ...e, end: n }));
  const [busy, setBusy] = useState(false);
  const [exported, setExported] = useState<LocalFile | null>(null);
  const valid = start >= 0 && end > start && end <= item.duration + 0.001;
  const act = async (what: string, run: () => Promise<void>) => {
    setBusy(true);
    try {
      await run();
    } catch (error) {
      toastError(what, error);
    } finally {
      setBusy(false);
    }
  };
  const point = (label: string, value: number, set: (n: number) => void) => (
    <label className="row trim-point">
      <span>{label}</span>
      <input
        className="input"
        type="number"
        min={0}
        max={item.duration}
        step={0.1}
        value={value}
        aria-label={`${label} point (seconds)`}
        onChange={(e) => set(round(Number(e.target.value)))}
      />
      <span>s</span>
    </label>
  );
  return (
    <section className="trim" aria-label="Trim">
      <div className="row">
        {point('In', start, setStart)}
        {point('Out', end, setEnd)}
        <span className="field-help grow">
          {valid ? `${round(end - start)} s of ${item.duration} s` : 'The out point must be after the in point.'}
        </span>
      </div>
      <div className="row">
        <button
          type="button"
          className="btn btn-small"
          disabled={busy || !valid}
          onClick={() =>
            void act('Could not trim the clip', async () =>
              setExported(await ipc().media.trim({ id: item.id, start, end })),
            )
          }
        >
          Export trimmed clip
        </button>
        <button
          type="button"
          className="btn btn-small"
          disabled={busy || !valid}
          onClick={() =>
            void act('Could not use the trimmed clip', async () => {
              await ipc().library.setShotTrim({ id: item.id, start, end });
              toastSuccess(`Shot trimmed to ${start}–${end} s in its chain`);
            })
          }
        >
          Use trimmed clip in chain
        </button>
        {trim && (
          <button
            type="button"
            className="btn btn-small"
            disabled={busy}
            onClick={() =>
              void act('Could not restore the whole clip', async () => {
                await ipc().library.setShotTrim({ id: item.id, clear: true });
              })
            }
          >
            Use whole clip
          </button>
        )}
      </div>
      {trim && (
        <div className="field-help" role="status" aria-label="Chain trim">
          In its chain: {trim.start}–{trim.end} s
        </div>
      )}
      {exported && <ExportedFile file={exported} label="Trim result" />}
    </section>
  );
}
