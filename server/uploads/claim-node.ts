import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { atomicWriteFile } from '../../shared/node/atomic-write.ts';

/** The file in a data directory that names its node across restarts (no secret: an id). */
export const NODE_ID_FILE = 'node.id';

/**
 * Who holds an upload claim (receive-claim.ts): `<node>.<run>`. `node` stays the same across
 * restarts of the service on one data directory (NODE_ID_FILE), `run` is this process's, so a
 * starting node knows the claims of its earlier runs for dead (docs/service.md). Nodes on one
 * database each have a data directory of their own (docs/scaling.md); nodes that share one also
 * share this id.
 */
export async function claimHolder(dataDir: string): Promise<{ node: string; run: string }> {
  const file = join(dataDir, NODE_ID_FILE);
  let node = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (!/^[0-9a-f]{16}$/.test(node)) {
    node = randomBytes(8).toString('hex');
    await atomicWriteFile(file, `${node}\n`);
  }
  return { node, run: randomBytes(6).toString('hex') };
}
