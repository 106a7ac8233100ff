import type { LocalEngine } from '../../core/engine/index.ts';
import type { Profiles } from '../../core/profiles/index.ts';
import type { Logger } from '../../../shared/node/logger.ts';
import type { ServiceSession, SessionGetter } from '../types.ts';

/** The active profile's session: one at a time, rebuilt when the profile or its services' settings change. */
export interface ActiveSession {
  /** The session, opened on first use (what handlers take). */
  get: SessionGetter;
  /** Opens the next session now when the one open was built for another profile or other settings. */
  follow(): void;
  dispose(): Promise<void>;
}

export function activeSession(deps: {
  profiles: Profiles;
  logger: Logger;
  /** Started for the local profile only. */
  localEngine: (() => Promise<LocalEngine>) & { moves?: () => number };
  /** Opens a session of the active profile (with the Local engine, for the local profile). */
  open: (local: LocalEngine | null) => Promise<ServiceSession>;
}): ActiveSession {
  const { profiles, logger } = deps;
  let current: Promise<ServiceSession> | null = null;
  let builtFor = '';
  // What the session's services were built with: the profile, the download folder and naming,
  // ffmpeg, and the Local engine's address (a takeover on another port moves it).
  const fingerprint = (): string => {
    const s = profiles.settings();
    return JSON.stringify([
      profiles.activeId(),
      s.downloadDir,
      s.namingPattern,
      s.ffmpegPath,
      deps.localEngine.moves?.(),
    ]);
  };
  const get = async (): Promise<ServiceSession> => {
    const want = fingerprint();
    if (current && builtFor === want) return current;
    const previous = current;
    builtFor = want;
    current = (async () => {
      await previous?.then((s) => s.dispose()).catch(() => undefined);
      const active = await profiles.active();
      return deps.open(active.kind === 'local' ? await deps.localEngine() : null);
    })();
    current.catch((error: unknown) => {
      logger.warn({ err: error }, 'could not open the service session');
      // A failed start (bad base URL, engine error) is retried on the next call.
      builtFor = '';
    });
    return current;
  };
  return {
    get,
    follow() {
      if (current && builtFor !== fingerprint()) void get().catch(() => undefined);
    },
    async dispose() {
      await current?.then((s) => s.dispose()).catch(() => undefined);
    },
  };
}
