// Zod-free, as the renderer's startup path needs it (docs/architecture.md, "The renderer's bundle").

/** An image size as the interface writes it: `<width>x<height>`. */
export const IMAGE_SIZE = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;

/** An image size's width and height, or [0, 0] for a string that is not one. */
export function parseImageSize(size: string): [number, number] {
  const m = IMAGE_SIZE.exec(size);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Pixel dimensions of the video size labels (16:9, even numbers as H.264 4:2:0 needs). */
export const VIDEO_SIZE_PIXELS = {
  '360p': { width: 640, height: 360 },
  '480p': { width: 854, height: 480 },
  '720p': { width: 1280, height: 720 },
  '1080p': { width: 1920, height: 1080 },
} as const satisfies Readonly<Record<string, { width: number; height: number }>>;

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
