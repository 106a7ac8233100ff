/** Where the CLI writes: results to stdout, progress and errors to stderr. Injected for tests. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** The whole of stdin (for `login`). */
  readStdin: () => Promise<string>;
  env: NodeJS.ProcessEnv;
  /** True when stderr is a terminal: progress may redraw one line. */
  interactive: boolean;
}

export function processIo(): CliIo {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
    env: process.env,
    interactive: process.stderr.isTTY === true,
  };
}

/** A progress line on stderr: redrawn in a terminal, every 25 % otherwise. */
export function createProgress(
  io: CliIo,
  label: string,
): {
  update(done: number, total: number | null): void;
  /** A broken transfer waits to be tried again: said on its own line, with how long. */
  wait(notice: { ms: number; what: string; message?: string }): void;
  end(): void;
} {
  let lastBucket = -1;
  let drawn = false;
  return {
    wait(notice) {
      if (drawn) io.stderr('\n');
      drawn = false;
      const seconds = Math.max(1, Math.round(notice.ms / 1000));
      const failure = notice.message ? ` (${notice.message})` : '';
      io.stderr(`${label}: failed${failure}, trying again; waiting ${seconds} s before ${notice.what}\n`);
    },
    update(done, total) {
      const pct = total ? Math.min(100, Math.floor((done / total) * 100)) : null;
      const text = pct === null ? `${label} ${(done / 1e6).toFixed(1)} MB` : `${label} ${pct}%`;
      if (io.interactive) {
        io.stderr(`\r${text}\u001b[K`);
        drawn = true;
        return;
      }
      const bucket = pct === null ? -1 : Math.floor(pct / 25);
      if (bucket > lastBucket) {
        lastBucket = bucket;
        io.stderr(`${text}\n`);
      }
    },
    end() {
      if (drawn) io.stderr('\n');
    },
  };
}
