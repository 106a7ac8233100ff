import type { Db } from '../storage/db.ts';

/**
 * Marks upload `id` received with the body stored under `key`, only while it is still pending:
 * of two PUTs whose bodies both reached the store (uploads/receive-claim.ts), the first to mark
 * keeps the upload, with its own bytes. False when another PUT marked it first, or the row is gone.
 */
export async function markUploadReceived(
  db: Db,
  id: string,
  received: { mime: string; key: string },
): Promise<boolean> {
  const marked = await db.run(
    "UPDATE uploads SET state = 'received', sniffed_mime = ?, received_key = ? WHERE id = ? AND state = 'pending'",
    received.mime,
    received.key,
    id,
  );
  return marked.changes > 0;
}
