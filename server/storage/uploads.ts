import type { Db } from './db.ts';

/** A row of `uploads`: a signed upload ticket and what became of it (server/uploads/). */
export interface UploadRow {
  id: string;
  user_id: string;
  key_id: string;
  filename: string;
  declared_mime: string;
  size: number;
  state: 'pending' | 'receiving' | 'received' | 'completed';
  sniffed_mime: string | null;
  /** Where the received bytes are (receivedUploadKey): the kept PUT's key, NULL on rows from before it was recorded. */
  received_key: string | null;
  media_id: string | null;
  created_at: number;
  expires_at: number;
}

export async function getUpload(db: Db, id: string): Promise<UploadRow | undefined> {
  return await db.get<UploadRow>('SELECT * FROM uploads WHERE id = ?', id);
}
