// docs/benchmarks.md, the queue under load: short IPC calls (`library.query`, `jobs.list`) while 50 jobs
// are open, against the same calls idle, in the same run; and main's event-loop delay. Goal: each
// call's latency (p50) ≤ 1.1× idle, main's event-loop p99 ≤ 10 ms; p99 and main's CPU are reported
// beside them.
//
// Main is a process of its own (this file with --main): browser mode's main, the app's real core
// and the embedded Local engine behind the loopback IPC binding, as `npm start -- --browser` runs it.
// This process is the renderer: it calls through that binding (the layer the page's calls take)
// and follows the event stream as the page does. Main measures its own event loop
// (perf_hooks.monitorEventLoopDelay) and answers on stdout.
//
// "Under load" is the queue's own load (see Variant below): 50 video jobs submitted through the IPC,
// the tier's (pro) 5 video slots holding generations in flight and 45 queued; main polls them,
// writes their steps, fans out job events to the page. The idle figures are taken first, in the
// same process, over the same seeded library (30,000 items), with the queue paused.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createORPCClient } from '@orpc/client';
import { RPCLink } from '@orpc/client/fetch';
import type { MediaItem } from '../shared/api/index.ts';
import type { IpcClient } from '../shared/ipc/client.ts';
import type { LibraryQueryInput } from '../shared/ipc/schemas/library.ts';
import { PROMPT_WORDS, syntheticLibraryItem } from '../test/support/synthetic-prompts.ts';
import { memoryKeychain } from '../test/support/memory-keychain.ts';
import { startFakeProcess } from './support/provider-fake.ts';
import { percentile, reportFigure } from './support/report.ts';

const ITEMS = 30_000;
const JOBS = 50;
const ROUNDS = 300;
const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * What the page does while the queue works, round after round: scroll the grid (a page, then the
 * next), search (a new pair of words each round, as typed: nothing kept helps), filter, and list
 * the jobs. Both phases make the same calls in the same order.
 */
const CALLS: Array<{ name: 'library.query' | 'jobs.list'; run: (ipc: IpcClient, round: number) => Promise<unknown> }> =
  [
    { name: 'library.query', run: (ipc) => browse(ipc, {}) },
    {
      name: 'library.query',
      run: (ipc, r) =>
        ipc.library.query({
          search: `${PROMPT_WORDS[r % PROMPT_WORDS.length]} ${PROMPT_WORDS[Math.floor(r / PROMPT_WORDS.length) % PROMPT_WORDS.length]}`,
        }),
    },
    {
      name: 'library.query',
      run: (ipc, r) =>
        ipc.library.query({
          media: r % 2 ? 'image' : 'video',
          size: ['360p', '720p', '1080p'][r % 3],
          favourite: false,
        }),
    },
    { name: 'jobs.list', run: (ipc) => ipc.jobs.list() },
  ];

/** The first page, then the next one (scrolling the grid). */
async function browse(ipc: IpcClient, q: LibraryQueryInput): Promise<unknown> {
  const first = await ipc.library.query(q);
  return first.nextCursor ? ipc.library.query({ ...q, cursor: first.nextCursor }) : first;
}

interface Loop {
  p50: number;
  p99: number;
  max: number;
  /** Main's own CPU time over the phase (user + system), ms: what it did, whatever the machine's load. */
  cpuMs: number;
  /** Event-loop utilisation over the phase (0–1). */
  elu: number;
}

// ---------------------------------------------------------------- main (the child process)

async function runMain(dataDir: string): Promise<void> {
  const { startBrowserMode } = await import('../electron/host/browser-mode.ts');
  // Provider keys go to a keychain of the bench's own: this machine may have no OS keychain running.
  const mode = await startBrowserMode({
    root,
    version: '0.0.0-bench',
    dataDir,
    background: false,
    secrets: memoryKeychain(),
  });
  const session = await mode.app.session();
  const now = Date.now();
  const batch: MediaItem[] = [];
  for (let i = 0; i < ITEMS; i++) {
    batch.push(syntheticLibraryItem(i, ITEMS, now));
    if (batch.length === 1000) session.library.upsert(batch.splice(0));
  }
  const probe = probeItems(now);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const ms = (ns: number) => ns / 1e6;
  let cpu = process.cpuUsage();
  let elu = perf.eventLoopUtilization();
  const say = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
  say({ origin: mode.host.origin, cookie: `clipdesk_${mode.host.port}=${mode.host.secret}` });
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'loop-start') {
      loop.reset();
      loop.enable();
      cpu = process.cpuUsage();
      elu = perf.eventLoopUtilization();
      say({ ok: true });
    } else if (line === 'loop-stop') {
      loop.disable();
      const used = process.cpuUsage(cpu);
      say({
        p50: ms(loop.percentile(50)),
        p99: ms(loop.percentile(99)),
        max: ms(loop.max),
        cpuMs: (used.user + used.system) / 1000,
        elu: perf.eventLoopUtilization(elu).utilization,
      } satisfies Loop);
    } else if (line === 'probe') {
      say({ ms: cpuProbe(probe) });
    } else if (line === 'quit') break;
  }
  await mode.close();
  process.exit(0);
}

/** 2,000 library items to copy in cpuProbe: the kind of work main's calls do (rows to objects to JSON). */
function probeItems(now: number): MediaItem[] {
  return Array.from({ length: 2000 }, (_, i) => syntheticLibraryItem(i, 2000, now));
}

/**
 * The machine's own slowdown of main's code, with no I/O and no waiting: the median of 15 runs of
 * a fixed synchronous job. Under load its ratio to idle says how much slower the same instructions
 * run (other processes' share of the cores and their caches), whatever main's own work does.
 */
function cpuProbe(items: MediaItem[]): number {
  const runs: number[] = [];
  for (let i = 0; i < 15; i++) {
    const t = perf.now();
    JSON.parse(JSON.stringify(items));
    runs.push(perf.now() - t);
  }
  return percentile(runs, 50);
}

// ---------------------------------------------------------------- the renderer (this process)

async function measure(ipc: IpcClient): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = { 'library.query': [], 'jobs.list': [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const call of CALLS) {
      const t = performance.now();
      await call.run(ipc, round);
      samples[call.name]!.push(performance.now() - t);
    }
  }
  return samples;
}

/**
 * What is in flight while the page browses:
 * - `provider` (the goal): the 5 video slots hold generations at an AI provider (fal's contract fake,
 *   in a process of its own, whose jobs keep running), 45 jobs wait. Main does the queue's work:
 *   polling, steps, job events, the page's calls.
 * - `local-renders` (for information): the same on the Local engine's procedural providers, whose
 *   ffmpeg renders run on this machine's two cores beside main.
 */
type Variant = 'provider' | 'local-renders';

export default async function (): Promise<void> {
  // P12_VARIANTS=provider (or local-renders) runs one of them, for profiling (P12_CPU_PROF=DIR).
  const only = process.env['P12_VARIANTS']?.split(',');
  for (const v of ['provider', 'local-renders'] as const) if (!only || only.includes(v)) await runVariant(v);
}

async function runVariant(variant: Variant): Promise<void> {
  const fake = variant === 'provider' ? await startFakeProcess('slow') : null;
  const dir = await mkdtemp(join(tmpdir(), 'clipdesk-bench-p12-'));
  const prof = process.env['P12_CPU_PROF'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['P12_CPU_PROF']}`] : [];
  const main = spawn(process.execPath, [...prof, '--no-warnings', fileURLToPath(import.meta.url), '--main', dir], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: main.stdout })[Symbol.asyncIterator]();
  const next = async <T>(command?: string): Promise<T> => {
    if (command) main.stdin.write(`${command}\n`);
    const { value, done } = await lines.next();
    if (done) throw new Error('main exited');
    return JSON.parse(value) as T;
  };
  const events = new AbortController();
  try {
    const { origin, cookie } = await next<{ origin: string; cookie: string }>();
    const ipc: IpcClient = createORPCClient(new RPCLink({ url: `${origin}/rpc`, headers: { cookie } }));
    // The page follows every event, as the renderer's store does.
    let seen = 0;
    const stream = await ipc.events.subscribe({}, { signal: events.signal });
    void (async () => {
      for await (const _ of stream) seen++;
    })().catch(() => undefined);

    // 50 long renders submitted as the page submits them, the queue paused: idle is the same
    // library and the same 50 open jobs (so jobs.list answers the same list), with nothing running.
    await ipc.jobs.pause();
    if (fake) {
      await ipc.providers.setKey({ id: 'fal', key: fake.key });
      await ipc.providers.setBaseUrl({ id: 'fal', baseUrl: fake.baseUrl });
    }
    for (let i = 0; i < JOBS; i++) {
      await ipc.jobs.submit(
        fake
          ? { kind: 'video', model: 'kling/v2.1', provider: 'fal', prompt: `queue under load ${i}`, duration: 5 }
          : { kind: 'video', model: 'clipdesk/motion', prompt: `queue under load ${i}`, size: '720p', duration: 8 },
      );
    }
    for (const call of CALLS) await call.run(ipc, ROUNDS); // warm both sides
    await next('loop-start');
    const idle = await measure(ipc);
    const idleLoop = await next<Loop>('loop-stop');
    const idleProbe = await next<{ ms: number }>('probe');

    // Under load: resumed, the tier's (pro) 5 video slots generate, 45 jobs wait.
    await ipc.jobs.resume();
    const generating = async () =>
      (await ipc.jobs.list()).jobs.filter((j) => j.state === 'generating' || j.state === 'uploading').length;
    for (let i = 0; i < 200 && (await generating()) < 5; i++) await new Promise((r) => setTimeout(r, 100));
    const inFlight = await generating();
    await next('loop-start');
    const loaded = await measure(ipc);
    const loadLoop = await next<Loop>('loop-stop');
    const loadProbe = await next<{ ms: number }>('probe');
    const open = (await ipc.jobs.list()).jobs.filter((j) => !['done', 'failed', 'canceled'].includes(j.state));
    const stillGenerating = await generating();
    const prefix = variant === 'provider' ? 'app-queue-load' : 'app-queue-local-renders';
    const goal = variant === 'provider' ? 'goal' : 'for information; goal of the provider line';
    console.log(
      `# ${variant}: ${open.length} jobs open, ${inFlight} generating at the start and ${stillGenerating} at the end; ${seen} events followed`,
    );

    for (const name of ['library.query', 'jobs.list'] as const) {
      for (const p of [50, 99]) {
        const load = percentile(loaded[name]!, p);
        const base = percentile(idle[name]!, p);
        reportFigure(
          `${prefix}-${name}-p${p}`,
          load,
          'ms',
          load / base,
          `idle p${p} ${base.toFixed(2)} ms (${p === 50 ? `${goal} ≤ 1.1` : 'for information'})`,
        );
      }
    }
    reportFigure(
      `${prefix}-main-loop-p99`,
      loadLoop.p99,
      'ms',
      loadLoop.p99 / idleLoop.p99,
      `idle p99 ${idleLoop.p99.toFixed(2)} ms (${goal} ≤ 10 ms; max under load ${loadLoop.max.toFixed(1)} ms)`,
    );

    // Main's own work for the same calls: CPU time is not stretched by other processes' load
    // (wall time is), so this ratio says what main itself does more under load.
    reportFigure(
      `${prefix}-main-cpu`,
      loadLoop.cpuMs,
      'ms',
      loadLoop.cpuMs / idleLoop.cpuMs,
      `idle ${idleLoop.cpuMs.toFixed(0)} ms for the same ${ROUNDS} rounds (event-loop utilisation ${idleLoop.elu.toFixed(2)} idle, ${loadLoop.elu.toFixed(2)} under load)`,
    );

    // The same fixed job in main, idle and under load: how much slower this machine runs main's
    // code while the load runs (on 2 vCPUs, renders beside main slow it even at nice 19).
    reportFigure(
      `${prefix}-main-cpu-probe`,
      loadProbe.ms,
      'ms',
      loadProbe.ms / idleProbe.ms,
      `idle ${idleProbe.ms.toFixed(2)} ms for the same fixed job (for information: the machine's slowdown of main's code)`,
    );

    for (const job of open) await ipc.jobs.cancel({ id: job.id }).catch(() => undefined);
  } finally {
    events.abort();
    main.stdin.write('quit\n');
    await new Promise((r) => main.once('exit', r));
    fake?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--main' && process.argv[3]) await runMain(process.argv[3]);
