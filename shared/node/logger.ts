import { mkdirSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import pino from 'pino';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { logFilePath } from './log-path.ts';
import type { LogProgram } from './log-path.ts';

/**
 * The app's, the engine's, the service's and the CLI's log: pino, to a rotating file in the data
 * folder (pino-roll), never to stdout (the CLI's stdout carries only its results).
 *
 * Keys never reach the file. Two layers: pino's `redact` censors the fields that hold secrets
 * (authorization headers, key fields), and every serialized line is scrubbed of anything shaped
 * like one of our keys (`cdsk_<16 hex>_<43 base64url>`, the format of server/auth/api-keys.ts) or a
 * bearer token, wherever it hides (a message, an error's stack, a URL).
 *
 * pino-roll numbers its files (`app.1.log`, `app.2.log` …); `logFilePath(dataDir, program)` is a
 * symbolic link to the one being written, so the path `clipdesk doctor` prints is always the
 * current log. Where a link cannot be made (Windows without the privilege), the numbered files
 * sit beside that path.
 */
export type Logger = PinoLogger;

export interface FileLoggerOptions {
  dataDir: string;
  program: LogProgram;
  /** Default 'info'. */
  level?: pino.LevelWithSilent;
  /** Rotate past this size (pino-roll syntax). Default '10m'. */
  size?: string;
  /** Rotated files kept besides the current one. Default 4. */
  keep?: number;
}

export interface FileLogger {
  logger: Logger;
  /** The file this log is written to (a link to the current numbered file). */
  path: string;
  /** Writes out what is buffered and closes the file. */
  close(): Promise<void>;
}

/** Our key format, unanchored: a key anywhere in a line. */
const KEY_PATTERN = /cdsk_[0-9a-f]{16}_[A-Za-z0-9_-]{20,}/g;
const BEARER_PATTERN = /\b(Bearer|Basic)\s+[^\s"\\,;]+/gi;

const REDACTED = '[redacted]';

/** A line with every key and bearer token replaced; pure, and used on every line written. */
export function scrubSecrets(line: string): string {
  return line.replace(KEY_PATTERN, `cdsk_${REDACTED}`).replace(BEARER_PATTERN, `$1 ${REDACTED}`);
}

/** Fields that hold secrets, wherever a caller puts them in a log record. */
const REDACT_PATHS = [
  'authorization',
  'headers.authorization',
  'req.headers.authorization',
  '*.headers.authorization',
  'key',
  'apiKey',
  'api_key',
  'secret',
  'token',
  'password',
  '*.key',
  '*.apiKey',
  '*.api_key',
  '*.secret',
  '*.token',
  '*.password',
];

interface RollStream {
  file: string;
  write(data: string): boolean;
  on(event: 'ready', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  flushSync(): void;
  end(): void;
  once(event: 'close', listener: () => void): unknown;
}

type RollFactory = (options: {
  file: string;
  size?: string;
  limit?: { count: number };
  mkdir?: boolean;
  sync?: boolean;
}) => Promise<RollStream>;

const require = createRequire(import.meta.url);

/** A logger whose records go through the scrubber to a destination (the file, or a test's array). */
export function createLogger(destination: { write(line: string): void }, level: pino.LevelWithSilent = 'info'): Logger {
  const scrubbed: DestinationStream = { write: (line: string) => destination.write(scrubSecrets(line)) };
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    scrubbed,
  );
}

/**
 * The program's file logger. It is usable at once: lines written before pino-roll has opened the
 * file are kept and written when it has. Writes are synchronous, so a crash or a SIGKILL loses
 * nothing already logged (the log says little enough that this costs nothing).
 */
export function createFileLogger(options: FileLoggerOptions): FileLogger {
  const path = logFilePath(options.dataDir, options.program);
  let pending: string[] | null = [];
  let stream: RollStream | null = null;
  let failed = false;
  let closed = false;
  mkdirSync(dirname(path), { recursive: true });
  // Required here rather than at the top: pino-roll loads all of date-fns (300 modules), which
  // the CLI's commands that keep no log file should not pay for at start-up.
  const roll = require('pino-roll') as RollFactory;
  const opened = roll({
    file: path,
    size: options.size ?? '10m',
    limit: { count: options.keep ?? 4 },
    mkdir: true,
    sync: true,
  }).then(
    (s) => {
      stream = s;
      s.on('error', () => undefined);
      linkCurrent(path, s.file);
      s.on('ready', () => linkCurrent(path, s.file));
      for (const line of pending ?? []) s.write(line);
      pending = null;
      return s;
    },
    () => {
      // No log file (a read-only data folder): the program runs on without one.
      failed = true;
      pending = null;
      return null;
    },
  );
  const logger = createLogger(
    {
      write(line) {
        if (closed) return;
        if (stream) stream.write(line);
        else if (pending && !failed) pending.push(line);
      },
    },
    options.level,
  );
  return {
    logger,
    path,
    async close() {
      const s = await opened;
      if (!s || closed) return;
      closed = true;
      await new Promise<void>((resolve) => {
        s.once('close', resolve);
        s.end();
      });
    },
  };
}

/** Points `path` at the numbered file being written (atomically: a new link renamed over the old). */
function linkCurrent(path: string, current: string): void {
  try {
    if (readlinkSync(path) === basename(current)) return;
  } catch {
    // No link yet.
  }
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.link`);
  try {
    symlinkSync(basename(current), temporary);
    renameSync(temporary, path);
  } catch {
    // No symbolic links here: the numbered files are the log.
  }
}
