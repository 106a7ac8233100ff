import { parseImageSize } from './generations.ts';

/**
 * Whether a provider's offer renders a size, as routing decides it (a basic requirement): a video
 * size is one of the labels it lists; an image fits within one of its `WxH` bounds. An offer that
 * lists no sizes (a record from another service) is taken to render any.
 */
export function offerRendersSize(sizes: readonly string[] | undefined, media: string, size: string): boolean {
  if (sizes === undefined) return true;
  const label = size.trim().toLowerCase();
  if (media !== 'image') return sizes.includes(label);
  const [w, h] = parseImageSize(label);
  if (w === 0 || h === 0) return false;
  return sizes.some((bound) => {
    const [bw, bh] = parseImageSize(bound);
    return w <= bw && h <= bh;
  });
}
