/**
 * `clipdesk generations get|wait|cancel|list` and the progress every waiting command prints on
 * stderr (docs/workflows.md): the step, the time since the wait began and the provider's queue position;
 * a wait on a 429 says what it waits for and how long. Nothing waits silently.
 */
import { GENERATION_STATUSES } from '../../shared/api/index.ts';
import type { Generation, GenerationStatus } from '../../shared/api/index.ts';
import { generationResult, isServiceError, stepLabel } from '../core/api/index.ts';
import type { WaitNotice } from '../core/api/index.ts';
import { UsageError } from './errors.ts';
import { mediaRef, portableItem } from './media-ref.ts';
import type { CliIo } from './io.ts';
import type { Session } from './session.ts';

type Flags = Record<string, string | boolean | undefined>;

/** How often a step that does not change is said again (non-terminal) or redrawn (terminal). */
const REPEAT_MS = 10_000;
const REDRAW_MS = 1_000;

export interface GenerationProgress {
  update(generation: Generation): void;
  wait(notice: WaitNotice): void;
  end(): void;
}

/** One line per change (and every 10 s while nothing changes); redrawn in place in a terminal. */
export function createGenerationProgress(io: CliIo, label: string, now: () => number = Date.now): GenerationProgress {
  const began = now();
  let last: Generation | null = null;
  let drawn = false;
  /** What the last line said, but the time: a log (not a terminal) gets each state once. */
  let lastState = '';
  const stateOf = (g: Generation): string => `${g.status}|${g.queuePosition ?? ''}|${g.progress ?? ''}`;
  const line = (g: Generation): string => {
    const seconds = Math.round((now() - began) / 1000);
    const parts = [`${label}: ${stepLabel(g.status)}`, `${seconds} s`];
    if (g.queuePosition !== undefined) parts.push(`queue position ${g.queuePosition}`);
    if (g.progress !== undefined) parts.push(`${Math.round(g.progress * 100)}%`);
    return parts.join(' · ');
  };
  const say = (text: string): void => {
    if (io.interactive) {
      io.stderr(`\r${text}\u001b[K`);
      drawn = true;
    } else io.stderr(`${text}\n`);
  };
  const timer = setInterval(
    () => {
      if (last) say(line(last));
    },
    io.interactive ? REDRAW_MS : REPEAT_MS,
  );
  timer.unref();
  return {
    update(generation) {
      last = generation;
      const state = stateOf(generation);
      // Polls answer the same state again and again; a terminal redraws it, a log says it once
      // (and again only on the 10 s repeat, so that a long wait is never silent).
      if (!io.interactive && state === lastState) return;
      lastState = state;
      say(line(generation));
    },
    wait(notice) {
      const seconds = Math.max(1, Math.round(notice.ms / 1000));
      const why =
        notice.reason === 'rate_limit'
          ? `rate limited (429${notice.message ? `: ${notice.message}` : ''})`
          : notice.reason === 'retry'
            ? `failed (${notice.message ?? 'no answer'}), trying again`
            : 'the rate-limit window is spent';
      if (drawn) io.stderr('\n');
      drawn = false;
      io.stderr(`${label}: ${why}; waiting ${seconds} s before ${notice.what}\n`);
    },
    end() {
      clearInterval(timer);
      if (drawn) io.stderr('\n');
      drawn = false;
    },
  };
}

function idOf(arg: string | undefined, command: string): string {
  if (!arg) throw new UsageError(`generations ${command} needs a generation id (gen_…)`);
  return arg;
}

/**
 * One line for people: `gen_1 generating · queue position 2`, plus the items or the error. On the
 * embedded engine an item is named `clipdesk-media:ID` (media-ref.ts): its URL names a port that
 * closes when this command exits; `clipdesk media download ID` saves it.
 */
export function describeGeneration(g: Generation, local: boolean): string {
  const parts = [`${g.id} ${g.status}`];
  if (g.queuePosition !== undefined) parts.push(`queue position ${g.queuePosition}`);
  if (g.progress !== undefined) parts.push(`${Math.round(g.progress * 100)}%`);
  if (g.error) parts.push(g.error.message);
  const lines = [parts.join(' · ')];
  for (const item of g.data ?? []) lines.push(`${item.id} ${local ? mediaRef(item.id) : item.url}`);
  return `${lines.join('\n')}\n`;
}

/** The generation as `--json` prints it: on the embedded engine its items carry references, not dead URLs. */
export function portableGeneration(g: Generation, local: boolean): unknown {
  return g.data === undefined ? g : { ...g, data: g.data.map((item) => portableItem(item, local)) };
}

function print(session: Session, io: CliIo, g: Generation, flags: Flags): void {
  const local = session.engine !== null;
  io.stdout(
    flags['json'] ? `${JSON.stringify(portableGeneration(g, local), null, 2)}\n` : describeGeneration(g, local),
  );
}

export async function generationsGet(session: Session, io: CliIo, arg: string | undefined, flags: Flags) {
  print(session, io, await session.api.getGeneration(idOf(arg, 'get')), flags);
}

/** Follows the generation to its end; exits non-zero when it failed or was canceled. */
export async function generationsWait(session: Session, io: CliIo, arg: string | undefined, flags: Flags) {
  const id = idOf(arg, 'wait');
  const progress = createGenerationProgress(io, id);
  let final: Generation;
  try {
    final = await session.api.waitForGeneration(id, {
      onUpdate: (g) => progress.update(g),
      onWait: (w) => progress.wait(w),
    });
  } finally {
    progress.end();
  }
  print(session, io, final, flags);
  // Failed or canceled: the error line and exit code of any other failed command.
  generationResult(final);
}

export async function generationsCancel(session: Session, io: CliIo, arg: string | undefined, flags: Flags) {
  const id = idOf(arg, 'cancel');
  const progress = createGenerationProgress(io, id);
  try {
    print(session, io, await session.api.cancelGeneration(id, { onWait: (w) => progress.wait(w) }), flags);
  } finally {
    progress.end();
  }
}

export async function generationsList(session: Session, io: CliIo, flags: Flags) {
  const status = typeof flags['status'] === 'string' ? flags['status'] : undefined;
  if (status !== undefined && !(GENERATION_STATUSES as readonly string[]).includes(status)) {
    throw new UsageError(`--status must be one of ${GENERATION_STATUSES.join(', ')}`);
  }
  const int = (name: string): number | undefined => {
    const v = flags[name];
    if (typeof v !== 'string') return undefined;
    if (!/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
    return Number(v);
  };
  const page = await session.api
    .listGenerations({
      ...(status ? { status: status as GenerationStatus } : {}),
      ...(int('limit') !== undefined ? { limit: int('limit') } : {}),
      ...(int('page') !== undefined ? { page: int('page') } : {}),
    })
    .catch((error: unknown) => {
      // `/generations` is an extension (docs/api.md): a service without it answers generate at once
      // and keeps no generations to list.
      if (!isServiceError(error) || (error.code !== 'not_found_error' && error.status !== 405)) throw error;
      io.stderr('This service has no asynchronous generations: it answers generate with the result\n');
      return { total: 0, generations: [] };
    });
  if (flags['json']) io.stdout(`${JSON.stringify(page, null, 2)}\n`);
  else for (const g of page.generations) io.stdout(`${g.id} ${g.status} ${g.operation} ${g.createdAt}\n`);
}
