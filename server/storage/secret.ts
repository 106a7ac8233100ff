import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { atomicWriteFile } from '../../shared/node/atomic-write.ts';

/**
 * The server's signing secret for upload and file URLs, kept in the data directory (mode 0600) so
 * URLs stay valid across restarts and the CLI and the server agree on it.
 */
export async function loadOrCreateSecret(dataDir: string): Promise<Buffer> {
  const path = join(dataDir, 'secret.key');
  try {
    const text = (await readFile(path, 'utf8')).trim();
    if (/^[0-9a-f]{64}$/.test(text)) return Buffer.from(text, 'hex');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const secret = randomBytes(32);
  await atomicWriteFile(path, secret.toString('hex') + '\n', 0o600);
  return secret;
}
