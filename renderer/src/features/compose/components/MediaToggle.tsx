import type { MediaKind } from '../../../../../shared/api/media.ts';
import { useCompose } from '../../../stores/compose/index.ts';

const KINDS: { value: MediaKind; label: string }[] = [
  { value: 'video', label: 'Video' },
  { value: 'image', label: 'Image' },
];

export function MediaToggle() {
  const media = useCompose((s) => s.media);
  const setMedia = useCompose((s) => s.setMedia);
  return (
    <div className="segmented" role="radiogroup" aria-label="Media kind">
      {KINDS.map((k) => (
        <button
          key={k.value}
          type="button"
          role="radio"
          aria-checked={media === k.value}
          tabIndex={media === k.value ? 0 : -1}
          onClick={() => setMedia(k.value)}
          onKeyDown={(e) => {
            if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') {
              e.preventDefault();
              const next = media === 'video' ? 'image' : 'video';
              setMedia(next);
              (e.currentTarget.parentElement?.querySelector(`[data-kind="${next}"]`) as HTMLElement | null)?.focus();
            }
          }}
          data-kind={k.value}
        >
          {k.label}
        </button>
      ))}
    </div>
  );
}
