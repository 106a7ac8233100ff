import { useState } from 'react';
import type { LocalFile } from '../../../../../shared/ipc/index.ts';
import { ipc } from '../../../lib/ipc.ts';
import { toastError } from '../../../stores/toasts/index.ts';
import { VideoPlayer } from './VideoPlayer.tsx';
import { ExportedFile } from './ExportedFile.tsx';

/**
 * A chain's shots back to back, stitched by main's ffmpeg at one size and frame rate: a quick
 * proxy to play here, or an MP4 written to the download folder.
 */
export function SequenceControls({ chainId, shots }: { chainId: string; shots: number }) {
  const [busy, setBusy] = useState<string | null>(null);
  const [preview, setPreview] = useState<LocalFile | null>(null);
  const [exported, setExported] = useState<LocalFile | null>(null);
  const run = async (purpose: 'preview' | 'export') => {
    setBusy(purpose === 'preview' ? 'Stitching the preview…' : 'Exporting the sequence…');
    try {
      const file = await ipc().media.sequence({ chainId, purpose });
      if (purpose === 'preview') setPreview(file);
      else setExported(file);
    } catch (error) {
      toastError(purpose === 'preview' ? 'Could not preview the sequence' : 'Could not export the sequence', error);
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <div className="row" role="group" aria-label="Sequence">
        <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void run('preview')}>
          Preview sequence
        </button>
        <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void run('export')}>
          Export sequence
        </button>
        <span className="field-help">{busy ?? `${shots} shots, back to back`}</span>
      </div>
      {preview && (
        <div aria-label="Sequence preview">
          <VideoPlayer key={preview.url} src={preview.url} poster={undefined} />
        </div>
      )}
      {exported && <ExportedFile file={exported} label="Sequence export" />}
    </>
  );
}
