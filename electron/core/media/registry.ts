/**
 * Every ffmpeg/ffprobe child the media tools start is entered here until it has exited, so
 * that quit can kill them all and tests can check that nothing is left behind.
 */
export interface RegisteredProcess {
  readonly id: number;
  readonly op: string;
  readonly startedAt: number;
  pid(): number | undefined;
  /** Kills the process (SIGKILL); resolves once it has exited. */
  kill(reason: 'canceled' | 'timeout' | 'quit'): void;
  /** Settles when the process has exited (or never started). */
  readonly exited: Promise<void>;
}

export interface ProcessRegistry {
  add(entry: Omit<RegisteredProcess, 'id'>): RegisteredProcess;
  remove(entry: RegisteredProcess): void;
  list(): readonly RegisteredProcess[];
  /** Kills every running process and waits for all of them to exit. */
  killAll(reason?: 'quit' | 'canceled'): Promise<void>;
}

export function createProcessRegistry(): ProcessRegistry {
  const running = new Map<number, RegisteredProcess>();
  let nextId = 1;
  return {
    add(entry) {
      const registered: RegisteredProcess = {
        ...entry,
        id: nextId++,
        pid: entry.pid,
        kill: entry.kill,
        exited: entry.exited,
      };
      running.set(registered.id, registered);
      return registered;
    },
    remove(entry) {
      running.delete(entry.id);
    },
    list() {
      return [...running.values()];
    },
    async killAll(reason = 'quit') {
      const all = [...running.values()];
      for (const p of all) p.kill(reason);
      await Promise.all(all.map((p) => p.exited));
    },
  };
}
