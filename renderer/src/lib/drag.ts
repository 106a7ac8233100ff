/** The drag payload of a Library tile, dropped on Compose's start-frame zone. */
export const LIBRARY_DRAG_TYPE = 'application/x-clipdesk-item';

export interface LibraryDragPayload {
  id: string;
  name: string;
  previewUrl: string;
  /** A video's start frame is its last frame (extracted on drop); absent means an image. */
  media?: 'video' | 'image';
}
