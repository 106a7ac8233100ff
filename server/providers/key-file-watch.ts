import { stat } from 'node:fs/promises';
import type { RemoteProviderId } from './remote/contract.ts';
import { keyFilePath, readKeyFile } from './provider-keys.ts';

/** How often a running service looks at its key file (a stat: cheap). */
export const KEY_FILE_CHECK_MS = 1_000;

type FileKeys = Partial<Record<RemoteProviderId, string>>;

export interface KeyFileWatch {
  /** Starts looking every interval (once the service is up); a change since the read is seen at once. */
  follow(): void;
  /** Looks at the file now; resolves once any change is applied. */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Follows the key file of a running service (`providers set-key` and `remove-key` write it from
 * another process): each change is read and handed to `apply` with the providers whose key
 * changed, so the keys take effect without a restart (docs/providers.md). A stat per interval,
 * not fs.watch: the CLI replaces the file by a rename, which some file systems do not report. A
 * file that does not parse keeps the keys in use and is logged by name, never by content.
 */
export async function watchKeyFile(o: {
  dataDir: string;
  apply: (keys: FileKeys, changed: RemoteProviderId[]) => Promise<void>;
  log: (message: string) => void;
  intervalMs?: number;
}): Promise<{ keys: FileKeys; watch: KeyFileWatch }> {
  const file = keyFilePath(o.dataDir);
  // Its state before the read: a change that lands between the two is seen on the first look.
  let seen = await signature(file);
  let keys = await readKeyFile(o.dataDir);
  let looking: Promise<void> | null = null;
  let stopped = false;
  const look = async () => {
    const now = await signature(file);
    if (now === seen || stopped) return;
    seen = now;
    let next: FileKeys;
    try {
      next = await readKeyFile(o.dataDir);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      o.log(`${file} changed but cannot be read (${why}); the keys in use stay`);
      return;
    }
    const ids = new Set([...Object.keys(keys), ...Object.keys(next)] as RemoteProviderId[]);
    const changed = [...ids].filter((id) => keys[id] !== next[id]);
    keys = next;
    if (changed.length > 0) await o.apply(next, changed);
  };
  const check = () => {
    looking ??= look()
      .catch((error: unknown) => o.log(`could not look at ${file}: ${String(error)}`))
      .finally(() => {
        looking = null;
      });
    return looking;
  };
  let timer: NodeJS.Timeout | undefined;
  const follow = () => {
    if (timer || stopped) return;
    timer = setInterval(() => void check(), o.intervalMs ?? KEY_FILE_CHECK_MS);
    timer.unref();
    void check();
  };
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { keys, watch: { follow, check, stop } };
}

/** What tells one version of the file from the next: inode, size and modification time; '' when absent. */
async function signature(file: string): Promise<string> {
  try {
    const s = await stat(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}
