import { useState } from 'react';
import type { ExportFormat, LocalFile } from '../../../../../shared/ipc/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { ExportedFile } from './ExportedFile.tsx';

const EXPORTS: { value: ExportFormat; label: string }[] = [
  { value: 'mp4', label: 'MP4' },
  { value: 'webm', label: 'WebM' },
  { value: 'gif', label: 'GIF' },
  { value: 'frame', label: 'Frame (PNG)' },
  { value: 'contactSheet', label: 'Contact sheet' },
];

/** Export of a video (transcode, GIF, a frame or a contact sheet), and the file it produced. */
export function ExportControls({ itemId }: { itemId: string }) {
  const busy = useLibrary((s) => s.busy[itemId]);
  const [format, setFormat] = useState<ExportFormat>('gif');
  const [exported, setExported] = useState<LocalFile | null>(null);
  return (
    <>
      <div className="row">
        <select
          className="select grow"
          aria-label="Export format"
          value={format}
          onChange={(e) => setFormat(e.target.value as ExportFormat)}
        >
          {EXPORTS.map((x) => (
            <option key={x.value} value={x.value}>
              {x.label}
            </option>
          ))}
        </select>
        <button
          type="button"
          className="btn btn-small"
          disabled={!!busy}
          onClick={() => {
            void useLibrary
              .getState()
              .exportAs(itemId, format)
              .then((f) => f && setExported(f));
          }}
        >
          Export
        </button>
      </div>
      {exported && <ExportedFile file={exported} label="Export result" />}
    </>
  );
}
