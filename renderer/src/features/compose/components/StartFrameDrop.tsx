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

/** Which slot: the start frame, or the end frame of a model that takes one (docs/workflows.md, "The prompt dock"). */
export type FrameSlot = 'start' | 'end';

/** Each slot's words and store fields; the start slot's names are the ones tests and assistive technology know. */
const SLOTS = {
  start: { title: 'Start frame', lower: 'start frame', article: 'a', field: 'image_url' },
  end: { title: 'End frame', lower: 'end frame', article: 'an', field: 'end_image_url' },
} as const;

function setterOf(slot: FrameSlot) {
  const s = useCompose.getState();
  return slot === 'start' ? s.setStartFrame : s.setEndFrame;
}

/** A video dropped on a slot gives its last frame (extracted by main): the next shot starts, or this one ends, there. */
async function fromLastFrame(p: LibraryDragPayload, slot: FrameSlot): Promise<void> {
  const file = await useLibrary.getState().useLastFrame(p.id);
  if (!file) return;
  setterOf(slot)({
    source: 'library',
    mediaId: p.id,
    name: `Last frame of “${p.name.slice(0, 40)}”`,
    previewUrl: file.url,
    lastFramePath: file.path,
  });
}

/** A filled slot: the picture, its name, and where it came from. */
function FramePreview({
  frame,
  title,
  onSize,
}: {
  frame: StartFrame;
  title: string;
  onSize: (width: number, height: number) => void;
}) {
  return (
    <>
      {/* A job's local file (Queue → Edit) has no URL to show: its name says what it is. */}
      {frame.previewUrl && (
        <img
          className="dropzone-preview"
          src={frame.previewUrl}
          alt={`${title} preview: ${frame.name}`}
          onLoad={(e) => {
            const img = e.currentTarget;
            if (frame.width === undefined) onSize(img.naturalWidth, img.naturalHeight);
          }}
        />
      )}
      <div className="grow">
        <div className="dropzone-name" style={{ fontWeight: 600, color: 'var(--text)' }}>
          {frame.name}
        </div>
        <div className="faint">
          {frame.source === 'file'
            ? formatBytes(frame.bytes)
            : frame.source === 'job'
              ? 'As the job you are editing had it'
              : frame.lastFramePath
                ? 'Last frame of a library video'
                : 'From the library'}
          {frame.width !== undefined && ` · ${frame.width}×${frame.height}`}
        </div>
        <div className="faint dropzone-note">Drop another image to replace it</div>
      </div>
    </>
  );
}

export function StartFrameDrop({ supported, slot = 'start' }: { supported: boolean; slot?: FrameSlot }) {
  const words = SLOTS[slot];
  const frame = useCompose((s) => (slot === 'start' ? s.startFrame : s.endFrame));
  const error = useCompose((s) => (slot === 'start' ? s.startFrameError : s.endFrameError));
  const setStartFrame = useCompose((s) => (slot === 'start' ? s.setStartFrame : s.setEndFrame));
  const setDimensions = useCompose((s) => (slot === 'start' ? s.setStartFrameDimensions : s.setEndFrameDimensions));
  const input = useRef<HTMLInputElement>(null);
  const [over, setOver] = useState(false);

  // A pasted image becomes the start frame (text pastes go to the prompt as usual); the end slot
  // takes a paste only while it has the focus (its onPaste below), so the two never both take one.
  useEffect(() => {
    if (!supported || slot !== 'start') return undefined;
    const onPaste = (e: ClipboardEvent) => {
      const file = [...(e.clipboardData?.files ?? [])].find((f) => f.type.startsWith('image/'));
      if (!file) return;
      e.preventDefault();
      setStartFrame(frameFromFile(file));
    };
    window.addEventListener('paste', onPaste);
    return () => window.removeEventListener('paste', onPaste);
  }, [supported, slot, setStartFrame]);

  const onPaste = (e: React.ClipboardEvent) => {
    if (slot !== 'end') return;
    const file = [...e.clipboardData.files].find((f) => f.type.startsWith('image/'));
    if (!file) return;
    e.preventDefault();
    // Not the start slot's paste too (its listener is on the window).
    e.stopPropagation();
    setStartFrame(frameFromFile(file));
  };

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
      if (p.media === 'video') void fromLastFrame(p, slot);
      else setStartFrame({ source: 'library', mediaId: p.id, name: p.name, previewUrl: p.previewUrl });
      return;
    }
    take(e.dataTransfer.files);
  };

  const warnings = frame ? checkStartFrame(frame.source === 'file' ? frame : { ...frame }).warnings : [];
  // Said before submit: the provider the selected routing would use takes no start frame.
  const row = useCompose(selectedRow);
  const dropped = frame && row?.provider && row.dropped.includes(words.field) ? row : null;

  return (
    <section className="field" aria-label={words.title}>
      <div className="field-label">
        <span>
          {words.title} {supported ? '(optional)' : ''}
        </span>
        {frame && (
          <button type="button" className="btn btn-ghost btn-small" onClick={() => setStartFrame(null)}>
            Remove {words.lower}
          </button>
        )}
      </div>
      {!supported ? (
        <p className="faint">
          This model does not take {words.article} {words.lower}.
        </p>
      ) : (
        <div
          className={`dropzone${over ? ' active' : ''}`}
          role="button"
          tabIndex={0}
          aria-label={`${words.title} drop zone: drop, paste or choose an image`}
          onPaste={onPaste}
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
            <FramePreview frame={frame} title={words.title} onSize={setDimensions} />
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
            aria-label={`Choose ${words.article} ${words.lower} image`}
            hidden
            onChange={(e) => {
              take(e.target.files);
              e.target.value = '';
            }}
          />
        </div>
      )}
      {dropped && (
        <div className="notice notice-warning" role="status" data-testid={`${slot}-frame-dropped`}>
          {slot === 'start'
            ? `Start frame dropped: ${dropped.provider?.name} (${dropped.routing}) takes no start frame, so this would be made from the prompt alone. Choose Optimal or Compatible routing to keep it.`
            : `End frame dropped: ${dropped.provider?.name} (${dropped.routing}) takes no end frame, so this clip would not end on it. Choose Optimal or Compatible routing to keep it.`}
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
