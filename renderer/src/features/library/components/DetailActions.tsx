import type { LibraryItem } from '../../../../../shared/ipc/index.ts';
import { useSettings } from '../../../stores/settings/index.ts';
import { toastError, toastSuccess } from '../../../stores/toasts/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import { useState } from 'react';
import {
  continueShot,
  makeVariations,
  regenerate,
  showOnStage,
  startFromImage,
  startFromLastFrame,
} from './sendToCompose.ts';

async function copyPrompt(prompt: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(prompt);
    toastSuccess('Prompt copied');
  } catch (error) {
    toastError('Could not copy the prompt', error);
  }
}

/**
 * What can be done with one item. In the public feed the item is someone else's: it can only be
 * copied or regenerated, not downloaded, kept or favourited.
 */
export function DetailActions({ entry, feed, canKeep }: { entry: LibraryItem; feed: boolean; canKeep: boolean }) {
  const { item } = entry;
  const busy = useLibrary((s) => s.busy[item.id]);
  const canReveal = useSettings((s) => s.app?.capabilities.revealInFolder ?? false);
  const lib = useLibrary.getState();
  const isVideo = item.media === 'video';
  const [variations, setVariations] = useState(3);
  return (
    <div className="row" role="group" aria-label="Actions">
      <button type="button" className="btn btn-primary btn-small" onClick={() => showOnStage(entry)}>
        Show on stage
      </button>
      {!feed && (
        <button
          type="button"
          className="btn btn-small"
          disabled={!!busy || entry.lost}
          onClick={() => void (entry.localPath ? lib.downloadAgain(item.id) : lib.download([item.id]))}
        >
          {entry.localPath ? 'Download again' : 'Download'}
        </button>
      )}
      {!feed && canReveal && entry.localPath && (
        <button type="button" className="btn btn-small" onClick={() => void lib.reveal(item.id)}>
          Reveal in folder
        </button>
      )}
      {!feed && (
        <button
          type="button"
          className="btn btn-small"
          aria-pressed={entry.favourite}
          onClick={() => void lib.setFavourite([item.id], !entry.favourite)}
        >
          {entry.favourite ? '★ Favourite' : '☆ Favourite'}
        </button>
      )}
      {!feed && canKeep && (
        <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void lib.retain(item.id)}>
          Keep
        </button>
      )}
      <button type="button" className="btn btn-small" onClick={() => void copyPrompt(item.prompt)}>
        Copy prompt
      </button>
      <button type="button" className="btn btn-small" onClick={() => regenerate(entry)}>
        Regenerate
      </button>
      {!isVideo && (
        <button type="button" className="btn btn-small" onClick={() => startFromImage(entry)}>
          Use as start frame
        </button>
      )}
      {isVideo && !feed && (
        <button
          type="button"
          className="btn btn-small"
          disabled={!!busy}
          onClick={() => void startFromLastFrame(entry)}
        >
          Use last frame
        </button>
      )}
      {isVideo && !feed && (
        <button type="button" className="btn btn-small" disabled={!!busy} onClick={() => void continueShot(entry)}>
          Continue this shot
        </button>
      )}
      {isVideo && !feed && (
        <span className="row" style={{ gap: 4 }}>
          <label className="visually-hidden" htmlFor={`variations-${item.id}`}>
            How many variations
          </label>
          <select
            id={`variations-${item.id}`}
            className="select"
            style={{ width: 56, height: 28, padding: '0 6px', fontSize: 12 }}
            value={variations}
            onChange={(e) => setVariations(Number(e.target.value))}
          >
            {[1, 2, 3, 4].map((n) => (
              <option key={n} value={n}>
                ×{n}
              </option>
            ))}
          </select>
          <button type="button" className="btn btn-small" onClick={() => makeVariations(entry, variations)}>
            Make variations ×{variations}
          </button>
        </span>
      )}
    </div>
  );
}
