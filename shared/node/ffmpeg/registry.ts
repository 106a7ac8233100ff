/**
 * Every ffmpeg/ffprobe child is entered in a registry until it has exited, so that quitting can
 * kill them all and wait for them, and tests can check that nothing is left behind. The app's
 * media tools keep one registry per instance; the service's runs use the process-wide one.
 */
export type KillReason = 'canceled' | 'timeout' | 'quit';

export interface RegisteredProcess {
  readonly id: number;
  readonly op: string;
  readonly startedAt: number;
  /** True once the process has been spawned (fluent-ffmpeg spawns it a few ticks after the call). */
  started(): boolean;
  /** Kills the process; `exited` settles once it is gone. */
  kill(reason: KillReason): void;
  /** Settles when the process has exited (or never started). */
  readonly exited: Promise<void>;
}

export interface ProcessRegistry {
  add(entry: Omit<RegisteredProcess, 'id'>): RegisteredProcess;
  remove(entry: RegisteredProcess): void;
  list(): readonly RegisteredProcess[];
  /** Kills every running process and waits for all of them to exit. */
  killAll(reason?: KillReason): Promise<void>;
}

export function createProcessRegistry(): ProcessRegistry {
  const running = new Map<number, RegisteredProcess>();
  let nextId = 1;
  return {
    add(entry) {
      const registered: RegisteredProcess = { ...entry, id: nextId++ };
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

/** The registry of runs that name none (the service's renders and pipeline steps). */
export const processRegistry: ProcessRegistry = createProcessRegistry();
