import { useEffect, useRef, useState } from 'react';
import { LIBRARY_DRAG_TYPE, type LibraryDragPayload } from '../../../lib/drag.ts';
import { formatBytes } from '../../../lib/format.ts';
import { useCompose } from '../../../stores/compose/index.ts';
import { useLibrary } from '../../../stores/library/index.ts';
import type { StartFrame } from '../../../stores/compose/initialState.ts';
import { checkStartFrame, selectedRow } from '../../../stores/compose/selectors.ts';

function frameFromFile(file: File): StartFrame {
  return {
    source: 'file',
    file,
    name: file.name || 'pasted image',
    bytes: file.size,
    mime: file.type,
    previewUrl: URL.createObjectURL(file),
  };
}

/** A video dropped on the slot starts the next one from its last frame (extracted by main). */
async function startFromLastFrame(p: LibraryDragPayload): Promise<void> {
  const file = await useLibrary.getState().useLastFrame(p.id);
  if (!file) return;
  useCompose.getState().setStartFrame({
    source: 'library',
    mediaId: p.id,
    name: `Last frame of “${p.name.slice(0, 40)}”`,
    previewUrl: file.url,
    lastFramePath: file.path,
  });
}

export function StartFrameDrop({ supported }: { supported: boolean }) {
  const frame = useCompose((s) => s.startFrame);
  const error = useCompose((s) => s.startFrameError);
  const setStartFrame = useCompose((s) => s.setStartFrame);
  const setDimensions = useCompose((s) => s.setStartFrameDimensions);
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);

  // A pasted image becomes the start frame (text pastes go to the prompt as usual).
  useEffect(() => {
    if (!supported) return undefined;
    const onPaste = (e: ClipboardEvent) => {
      const file = [...(e.clipboardData?.files ?? [])].find((f) => f.type.startsWith('image/'));
      if (!file) return;
      e.preventDefault();
      setStartFrame(frameFromFile(file));
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [supported, setStartFrame]);

  const take = (files: FileList | null | undefined) => {
    const file = files?.[0];
    if (file) setStartFrame(frameFromFile(file));
  };

  const onDrop = (e: React.DragEvent) => {
    e.preventDefault();
    setOver(false);
    const libraryItem = e.dataTransfer.getData(LIBRARY_DRAG_TYPE);
    if (libraryItem) {
      const p = JSON.parse(libraryItem) as LibraryDragPayload;
      if (p.media === 'video') void startFromLastFrame(p);
      else setStartFrame({ source: 'library', mediaId: p.id, name: p.name, previewUrl: p.previewUrl });
      return;
    }
    take(e.dataTransfer.files);
  };

  const warnings = frame ? checkStartFrame(frame.source === 'file' ? frame : { ...frame }).warnings : [];
  // Said before submit: the provider the selected routing would use takes no start frame.
  const row = useCompose(selectedRow);
  const dropped = frame && row?.provider && row.dropped.includes('image_url') ? row : null;

  return (
    <section className="field" aria-label="Start frame">
      <div className="field-label">
        <span>Start frame {supported ? '(optional)' : ''}</span>
        {frame && (
          <button type="button" className="btn btn-ghost btn-small" onClick={() => setStartFrame(null)}>
            Remove start frame
          </button>
        )}
      </div>
      {!supported ? (
        <p className="faint">This model does not take a start frame.</p>
      ) : (
        <div
          className={`dropzone${over ? ' active' : ''}`}
          role="button"
          tabIndex={0}
          aria-label="Start frame drop zone: drop, paste or choose an image"
          onClick={() => input.current?.click()}
          onKeyDown={(e) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              input.current?.click();
            }
          }}
          onDragOver={(e) => {
            e.preventDefault();
            e.dataTransfer.dropEffect = 'copy';
            setOver(true);
          }}
          onDragLeave={() => setOver(false)}
          onDrop={onDrop}
        >
          {frame ? (
            <>
              <img
                className="dropzone-preview"
                src={frame.previewUrl}
                alt={`Start frame preview: ${frame.name}`}
                onLoad={(e) => {
                  const img = e.currentTarget;
                  if (frame.width === undefined) setDimensions(img.naturalWidth, img.naturalHeight);
                }}
              />
              <div className="grow">
                <div className="dropzone-name" style={{ fontWeight: 600, color: 'var(--text)' }}>
                  {frame.name}
                </div>
                <div className="faint">
                  {frame.source === 'file'
                    ? formatBytes(frame.bytes)
                    : frame.lastFramePath
                      ? 'Last frame of a library video'
                      : 'From the library'}
                  {frame.width !== undefined && ` · ${frame.width}×${frame.height}`}
                </div>
                <div className="faint dropzone-note">Drop another image to replace it</div>
              </div>
            </>
          ) : (
            <div>
              <div style={{ color: 'var(--text)', fontWeight: 500 }}>Drop an image, paste one, or click to choose</div>
              <div className="faint">PNG, JPEG, WebP or GIF up to 20 MB · or drag a take here</div>
            </div>
          )}
          <input
            ref={input}
            type="file"
            accept="image/png,image/jpeg,image/webp,image/gif"
            aria-label="Choose a start frame image"
            hidden
            onChange={(e) => {
              take(e.target.files);
              e.target.value = '';
            }}
          />
        </div>
      )}
      {dropped && (
        <div className="notice notice-warning" role="status" data-testid="start-frame-dropped">
          Start frame dropped: {dropped.provider?.name} ({dropped.routing}) takes no start frame, so this would be made
          from the prompt alone. Choose Optimal or Compatible routing to keep it.
        </div>
      )}
      {error && (
        <div className="notice notice-error" role="alert">
          {error}
        </div>
      )}
      {warnings.map((w) => (
        <div key={w} className="notice notice-warning" role="status">
          {w}
        </div>
      ))}
    </section>
  );
}
