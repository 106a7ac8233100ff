import type { ComposeSlice } from './actions.ts';
import { MAX_VARIATIONS } from './initialState.ts';
import type { ComposeState, StartFrame } from './initialState.ts';
import { checkStartFrame } from './selectors.ts';

/** `POST /videos/variations` takes n from 1 to 4. */
export const MAX_SOURCE_VARIATIONS = 4;
function clampVariations(n: number): number {
  return Math.min(MAX_SOURCE_VARIATIONS, Math.max(1, Math.round(Number.isFinite(n) ? n : 1)));
}

/** What a video starts from (a start frame, or a source video to vary) and how many to make. */
export const createStartFrameSlice: ComposeSlice<
  | 'setVariationOf'
  | 'setVariationCount'
  | 'setVariations'
  | 'setStartFrame'
  | 'setStartFrameDimensions'
  | 'refuseStartFrame'
  | 'setEndFrame'
  | 'setEndFrameDimensions'
  | 'refuseEndFrame'
> = (set, get) => ({
  setVariationOf(source) {
    set({ variationOf: source ? { ...source, count: clampVariations(source.count) } : null, submitError: null });
  },
  setVariationCount(n) {
    const current = get().variationOf;
    if (current) set({ variationOf: { ...current, count: clampVariations(n) } });
  },
  setVariations(n) {
    set({ variations: Math.min(MAX_VARIATIONS, Math.max(2, Math.round(n))) });
  },
  setStartFrame(frame) {
    set(checkedFrame('startFrame', get().startFrame, frame));
  },
  setStartFrameDimensions(width, height) {
    const frame = get().startFrame;
    if (frame) set({ startFrame: { ...frame, width, height } });
  },
  refuseStartFrame(message) {
    set({ startFrameError: message });
  },
  setEndFrame(frame) {
    set(checkedFrame('endFrame', get().endFrame, frame));
  },
  setEndFrameDimensions(width, height) {
    const frame = get().endFrame;
    if (frame) set({ endFrame: { ...frame, width, height } });
  },
  refuseEndFrame(message) {
    set({ endFrameError: message });
  },
});

/**
 * A slot's new frame, checked before anything is uploaded (one check for the start and the end
 * frame): a refused file never fills the slot, and a replaced file's preview URL is freed.
 */
function checkedFrame(
  slot: 'startFrame' | 'endFrame',
  previous: StartFrame | null,
  frame: StartFrame | null,
): Partial<ComposeState> {
  const error = slot === 'startFrame' ? 'startFrameError' : 'endFrameError';
  if (previous?.source === 'file' && previous.previewUrl !== frame?.previewUrl)
    URL.revokeObjectURL(previous.previewUrl);
  if (!frame) return { [slot]: null, [error]: null };
  const check = checkStartFrame(frame.source === 'file' ? frame : { ...frame, bytes: undefined, mime: undefined });
  if (check.error) {
    if (frame.source === 'file') URL.revokeObjectURL(frame.previewUrl);
    return { [slot]: null, [error]: check.error };
  }
  return { [slot]: frame, [error]: null };
}
