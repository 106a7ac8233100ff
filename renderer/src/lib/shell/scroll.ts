import { useLayoutEffect, useRef, type RefObject } from 'react';

/** Scroll offsets by key (a screen, or a screen's own scroller), for the window's life. */
const saved = new Map<string, number>();

/** How many frames a restore keeps trying while the content is still growing to its height. */
const SETTLE_FRAMES = 30;

/**
 * Keeps a scroller's position per key (docs/workflows.md, "Windows"): each screen comes back where
 * it was left, and a screen never inherits another's offset. A lazily loaded screen is not tall
 * enough at once, so the restore retries for a few frames until the content has its height.
 */
export function useRememberedScroll(ref: RefObject<HTMLElement | null>, key: string): void {
  // The scroller this hook has kept a position for: any other is freshly mounted, at the top.
  const kept = useRef<HTMLElement | null>(null);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const want = saved.get(key) ?? 0;
    // Writing scrollTop forces a layout there and then: a scroller just mounted is at the top
    // already, so its first screen (the app's first paint) is laid out once, in its frame.
    const restore = want !== 0 || kept.current === el;
    if (restore) el.scrollTop = want;
    kept.current = el;
    let frames = 0;
    let raf = 0;
    const settle = () => {
      if (Math.abs(el.scrollTop - want) > 1 && frames++ < SETTLE_FRAMES) {
        el.scrollTop = want;
        raf = requestAnimationFrame(settle);
      }
    };
    if (restore && Math.abs(el.scrollTop - want) > 1) raf = requestAnimationFrame(settle);
    const onScroll = () => {
      // A clamp while the content is still short is not the reader's choice: keep the wanted offset.
      if (frames > 0 && frames < SETTLE_FRAMES && el.scrollTop < want) return;
      saved.set(key, el.scrollTop);
    };
    el.addEventListener('scroll', onScroll, { passive: true });
    return () => {
      cancelAnimationFrame(raf);
      el.removeEventListener('scroll', onScroll);
    };
  }, [ref, key]);
}

/** Tests start each case from the top. */
export function forgetScrollPositions(): void {
  saved.clear();
}
