/** The drag payload of a take (a Library tile, a filmstrip take, a shot), dropped on a frame slot. */
export const LIBRARY_DRAG_TYPE = 'application/x-clipdesk-item';

export interface LibraryDragPayload {
  id: string;
  name: string;
  previewUrl: string;
  /** A video's start frame is its last frame (extracted on drop); absent means an image. */
  media?: 'video' | 'image';
}
