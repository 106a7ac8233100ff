import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { MediaTools, ProgressState } from '../../core/media/index.ts';
import type { ItemFileDeps, LibraryQuery as CoreQuery } from '../../core/library/index.ts';
import {
  collectionIdsOf,
  countMatching,
  createUrlRefresher,
  localFile,
  safeFileName,
  shotFile,
} from '../../core/library/index.ts';
import type { UrlRefresher } from '../../core/library/index.ts';
import type { ExportFormat, LibraryQuery, LocalFile } from '../../../shared/ipc/schemas/library.ts';
import { ServiceError } from '../../core/api/errors.ts';
import { ipcError } from '../errors.ts';
import type { EventBus } from '../events.ts';
import { mimeForPath } from '../local-media.ts';
import { toLibraryItem } from '../mappers.ts';
import { updateSidecarOf, restoreChainsFromSidecars } from '../shot-lineage.ts';
import type { ChainView } from '../../../shared/ipc/schemas/chains.ts';
import { publicFeedPage } from '../public-feed.ts';
import type { PlatformPort } from '../platform.ts';
import type { ServiceSession, SessionGetter } from '../session.ts';
import type { DomainHandlers } from '../types.ts';

export interface LibraryDeps {
  session: SessionGetter;
  bus: EventBus;
  media: () => MediaTools;
  platform: PlatformPort;
  /** Where previews, frames and other working files go (a media root). */
  workDir: string;
  /** The download folder from settings: exports (clips, trims, sequences) go to its `exports/`. */
  downloadDir: () => string;
  mediaUrl: (file: string) => string | null;
  now: () => number;
}

function toCoreQuery(q: LibraryQuery): CoreQuery {
  const out: CoreQuery = { sort: q.sort, includeLost: q.includeLost, limit: q.limit };
  if (q.media) out.media = q.media;
  if (q.size) out.size = q.size;
  if (q.model) out.model = q.model;
  if (q.provider) out.provider = q.provider;
  if (q.search) out.search = q.search;
  if (q.downloaded !== undefined) out.downloaded = q.downloaded;
  if (q.favourite !== undefined) out.favourite = q.favourite;
  if (q.collectionId) out.collection = q.collectionId;
  if (q.expiringWithinHours) out.expiringWithinMs = q.expiringWithinHours * 3_600_000;
  if (q.cursor) out.cursor = q.cursor;
  return out;
}

const EXT: Readonly<Record<ExportFormat, string>> = {
  mp4: 'mp4',
  webm: 'webm',
  gif: 'gif',
  frame: 'png',
  lastFrame: 'png',
  contactSheet: 'png',
};

/** Why "Download again" failed, in words that say what is left: the service's answer, and the copy on disk. */
function downloadAgainError(error: unknown, previous: string | null): unknown {
  const code = error instanceof ServiceError ? error.code : undefined;
  const kept = previous ? ' The copy already on disk is kept.' : '';
  if (code === 'not_found_error')
    return ipcError('not_found_error', `The service no longer has this item, so it cannot be downloaded again.${kept}`);
  if (code === 'permission_error' || code === 'authentication_error')
    return ipcError(
      'permission_error',
      `The service refused the download, even with a fresh link: ${String((error as Error).message).replace(/\.$/, '')}.${kept}`,
    );
  return error;
}

/** What the library's routes share: the session, the running media tasks, and their views. */
interface LibraryContext {
  deps: LibraryDeps;
  tasks: Map<string, AbortController>;
  refresher(s: ServiceSession): UrlRefresher;
  item(id: string): Promise<{ s: ServiceSession; entry: NonNullable<ReturnType<ServiceSession['library']['get']>> }>;
  view(s: ServiceSession, id: string): ReturnType<typeof toLibraryItem>;
  chainView(s: ServiceSession, id: string): ChainView;
  files(s: ServiceSession): ItemFileDeps;
  /** The item's file on disk, downloading it first when needed. */
  localFile(id: string, signal?: AbortSignal): Promise<string>;
  task(
    itemId: string,
    operation: string,
    output: string,
    run: (opts: { signal: AbortSignal; onProgress: (p: ProgressState) => void }) => Promise<unknown>,
    signal?: AbortSignal,
  ): Promise<LocalFile>;
  /** Working files (previews): the app's media folder. */
  out(id: string, name: string): string;
  /** What the creator exports (clips, trims, sequences): the download folder from settings. */
  exported(id: string, name: string): string;
}

function libraryContext(deps: LibraryDeps): LibraryContext {
  const { session, bus } = deps;
  /** Signed URLs expire on the service; one refresher per session keeps those we hand out working. */
  const refreshers = new WeakMap<ServiceSession, UrlRefresher>();
  const c: LibraryContext = {
    deps,
    tasks: new Map(),
    refresher(s) {
      let r = refreshers.get(s);
      if (!r) {
        r = createUrlRefresher({
          getMedia: (id, o) => s.api.getMedia(id, o),
          upsert: (items) => s.library.upsert(items),
          reconcile: (signal) => s.sync.reconcile(signal),
          now: deps.now,
        });
        refreshers.set(s, r);
      }
      return r;
    },
    async item(id) {
      const s = await session();
      const entry = s.library.get(id);
      if (!entry) throw ipcError('not_found', `No library item ${id}`);
      return { s, entry };
    },
    view(s, id) {
      const entry = s.library.get(id);
      if (!entry) throw ipcError('not_found', `No library item ${id}`);
      return toLibraryItem(
        entry,
        collectionIdsOf(s.library.db, [id]).get(id) ?? [],
        deps.mediaUrl,
        s.library.chains.badges([id]).get(id) ?? null,
      );
    },
    chainView(s, id) {
      const shots = s.library.chains.chainOf(id);
      return {
        chainId: shots[0]?.chainId ?? null,
        shots: shots.map((shot) => ({
          itemId: shot.itemId,
          position: shot.position,
          parentId: shot.parentId,
          sourceImageSha256: shot.sourceSha256,
          trim: shot.trim,
          item: s.library.get(shot.itemId) ? c.view(s, shot.itemId) : null,
        })),
      };
    },
    files: (s) => ({
      library: s.library,
      downloads: s.downloads,
      trim: (input, output, opts) => deps.media().trim(input, output, opts),
      workDir: deps.workDir,
      downloaded: (id) => bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } }),
    }),
    async localFile(id, signal) {
      const { s } = await c.item(id);
      return localFile(c.files(s), id, signal);
    },
    task: (itemId, operation, output, run, signal) => runTask(c, { itemId, operation, output, run, signal }),
    out: (id, name) => path.join(deps.workDir, 'exports', `${safeFileName(id)}-${name}`),
    exported: (id, name) => path.join(deps.downloadDir(), 'exports', `${safeFileName(id)}-${name}`),
  };
  return c;
}

/** One ffmpeg task with progress events and a cancel handle. */
async function runTask(
  c: LibraryContext,
  t: {
    itemId: string;
    operation: string;
    output: string;
    run: Parameters<LibraryContext['task']>[3];
    signal: AbortSignal | undefined;
  },
): Promise<LocalFile> {
  const id = `task:${randomUUID()}`;
  const controller = new AbortController();
  t.signal?.addEventListener('abort', () => controller.abort());
  c.tasks.set(id, controller);
  const emit = (state: 'running' | 'done' | 'failed' | 'canceled', progress: number | null) =>
    c.deps.bus.publish({
      type: 'media.task',
      task: { id, itemId: t.itemId, operation: t.operation, progress, state },
    });
  emit('running', 0);
  mkdirSync(path.dirname(t.output), { recursive: true });
  try {
    await t.run({
      signal: controller.signal,
      onProgress: (p) => emit('running', p.fraction === null ? null : Math.min(1, Math.max(0, p.fraction))),
    });
    emit('done', 1);
  } catch (error) {
    emit(controller.signal.aborted ? 'canceled' : 'failed', null);
    throw error;
  } finally {
    c.tasks.delete(id);
  }
  const url = c.deps.mediaUrl(t.output);
  if (!url) throw ipcError('internal_error', 'The output is outside the media folders.');
  return { path: t.output, url, mime: mimeForPath(t.output), bytes: statSync(t.output).size };
}

/** A background download's end, as the transfers list shows it. */
function publishDownload(bus: EventBus, id: string, outcome: { bytes: number } | { error: unknown }): void {
  const done = 'bytes' in outcome;
  if (done) bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } });
  bus.publish({
    type: 'transfer.progress',
    transfer: {
      id: `download:${id}`,
      direction: 'download',
      jobId: null,
      itemId: id,
      done: done ? outcome.bytes : 0,
      total: done ? outcome.bytes : null,
      state: done ? 'done' : 'failed',
      error: done ? null : outcome.error instanceof Error ? outcome.error.message : String(outcome.error),
    },
  });
}

/** The library's reads and the item's own state (favourite, retention, downloads). */
function libraryItemRoutes(c: LibraryContext) {
  const { deps } = c;
  const { session, bus } = deps;
  return {
    query: async (q) => {
      const s = await session();
      const core = toCoreQuery(q);
      const page = s.library.query(core);
      c.refresher(s).refreshInBackground(page.items);
      const itemIds = page.items.map((i) => i.item.id);
      const ids = collectionIdsOf(s.library.db, itemIds);
      const chains = s.library.chains.badges(itemIds);
      const total = countMatching(s.library.db, core, deps.now());
      return {
        items: page.items.map((e) =>
          toLibraryItem(e, ids.get(e.item.id) ?? [], deps.mediaUrl, chains.get(e.item.id) ?? null),
        ),
        nextCursor: page.nextCursor,
        total: total >= 0 ? total : page.items.length,
      };
    },
    get: async ({ id }, ctx) => {
      const { s, entry } = await c.item(id);
      // The detail view plays the item now: an expired URL is renewed before it is handed out.
      await c.refresher(s).refreshItem(entry, ctx.signal);
      return c.view(s, id);
    },
    sync: async (input, ctx) => {
      const s = await session();
      const r = input?.full ? await s.sync.reconcile(ctx.signal) : await s.sync.sync(ctx.signal);
      return { added: r.added, updated: r.updated, removed: r.lost.length, requests: r.requests };
    },
    setFavourite: async ({ ids, favourite }) => {
      const s = await session();
      let updated = 0;
      for (const id of ids) if (s.library.setFavourite(id, favourite)) updated++;
      bus.publish({ type: 'library.changed', change: { reason: 'favourite', ids } });
      return { updated };
    },
    retain: async ({ id, days, forever }, ctx) => {
      const { s } = await c.item(id);
      const updated = await s.api.retainMedia(
        id,
        { ...(days ? { days } : {}), ...(forever ? { forever } : {}) },
        { signal: ctx.signal },
      );
      if (updated) s.library.upsert([updated]);
      else await s.sync.sync(ctx.signal).catch(() => undefined);
      bus.publish({ type: 'library.changed', change: { reason: 'retention', ids: [id] } });
      return c.view(s, id);
    },
    download: async ({ ids }) => {
      const s = await session();
      const queued: string[] = [];
      const present: string[] = [];
      for (const id of ids) {
        const entry = s.library.get(id);
        if (!entry) throw ipcError('not_found', `No library item ${id}`);
        if (entry.downloadedPath) {
          present.push(id);
          continue;
        }
        queued.push(id);
        s.downloads
          .download({ item: entry.item })
          .then((r) => {
            s.library.markDownloaded(id, r.path);
            publishDownload(bus, id, { bytes: r.bytes });
          })
          // A failed download, or a library that could not record it, is the job's error event.
          .catch((error: unknown) => publishDownload(bus, id, { error }));
      }
      return { queued, present };
    },
    downloadAgain: async ({ id }, ctx) => {
      const { s, entry } = await c.item(id);
      if (entry.lostAt !== null)
        throw ipcError(
          'not_found_error',
          'The service deleted this item before it was saved, so it cannot be downloaded.',
        );
      let result;
      try {
        // The manager renews an expired signed URL by itself (GET /media/:id) and retries once.
        result = await s.downloads.download({ item: entry.item, replace: true, signal: ctx.signal });
      } catch (error) {
        throw downloadAgainError(error, entry.downloadedPath);
      }
      s.library.markDownloaded(id, result.path);
      bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } });
      return c.view(s, id);
    },
  } satisfies Partial<DomainHandlers<'library'>>;
}

/** What is made from an item's file (exports, frames) and its shot chain. */
function libraryFileRoutes(c: LibraryContext) {
  const { deps } = c;
  const { session, bus } = deps;
  return {
    reveal: async ({ id }, ctx) => {
      const file = await c.localFile(id, ctx.signal);
      return { path: file, revealed: await deps.platform.revealPath(file) };
    },
    export: async ({ id, format, at, columns, rows }, ctx) => {
      const input = await c.localFile(id, ctx.signal);
      const media = deps.media();
      const target = c.exported(id, `${format}${format === 'frame' ? `-${at ?? 0}` : ''}.${EXT[format]}`);
      return c.task(
        id,
        `export:${format}`,
        target,
        (o) => {
          switch (format) {
            case 'mp4':
              return media.exportMp4(input, target, o);
            case 'webm':
              return media.exportWebm(input, target, o);
            case 'gif':
              return media.exportGif(input, target, o);
            case 'frame':
              return media.frameAt(input, target, at ?? 0, o);
            case 'lastFrame':
              return media.lastFrame(input, target, o);
            case 'contactSheet': {
              const cols = columns ?? 4;
              return media.contactSheet(input, target, { ...o, frames: cols * (rows ?? 3), columns: cols });
            }
          }
        },
        ctx.signal,
      );
    },
    useLastFrame: async ({ id }, ctx) => {
      // A shot used trimmed in its chain continues from its out point.
      const s = await session();
      const input = await shotFile(c.files(s), id, ctx.signal);
      const target = path.join(deps.workDir, 'frames', `${safeFileName(id)}-last.png`);
      return c.task(id, 'lastFrame', target, (o) => deps.media().lastFrame(input, target, o), ctx.signal);
    },
    feed: async (q, ctx) => publicFeedPage((await session()).api, q, { signal: ctx.signal }),
    chain: async ({ id }) => c.chainView(await session(), id),
    setShotTrim: async (input) => {
      const { s, entry } = await c.item(input.id);
      if (entry.item.media !== 'video') throw ipcError('invalid_input', 'Only a video can be trimmed.');
      if ('start' in input && entry.item.duration > 0 && input.start >= entry.item.duration)
        throw ipcError('invalid_input', `The in point must be before the clip's end (${entry.item.duration} s).`);
      const trim =
        'start' in input ? { start: input.start, end: Math.min(input.end, entry.item.duration || input.end) } : null;
      const shot = s.library.chains.setTrim(input.id, trim);
      await updateSidecarOf(s.library, shot);
      bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: [input.id] } });
      return c.chainView(s, input.id);
    },
    restoreChains: async () => {
      const s = await session();
      const added = await restoreChainsFromSidecars(s.library, deps.downloadDir(), true);
      if (added > 0) bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: [] } });
      return { added };
    },
  } satisfies Partial<DomainHandlers<'library'>>;
}

function collectionRoutes(c: LibraryContext): DomainHandlers<'collections'> {
  const { session, bus } = c.deps;
  const collectionsList = async () => {
    const s = await session();
    return { collections: s.library.collections().map((x) => ({ id: x.id, name: x.name, count: x.size })) };
  };
  const changed = async (ids: string[] = []) => {
    bus.publish({ type: 'library.changed', change: { reason: 'collection', ids } });
    return collectionsList();
  };
  return {
    list: collectionsList,
    create: async ({ name }) => {
      (await session()).library.createCollection(name);
      return changed();
    },
    rename: async ({ id, name }) => {
      (await session()).library.renameCollection(id, name);
      return changed();
    },
    remove: async ({ id }) => {
      (await session()).library.deleteCollection(id);
      return changed();
    },
    addItems: async ({ id, itemIds }) => {
      (await session()).library.addToCollection(id, itemIds);
      return changed(itemIds);
    },
    removeItems: async ({ id, itemIds }) => {
      (await session()).library.removeFromCollection(id, itemIds);
      return changed(itemIds);
    },
  };
}

function mediaRoutes(c: LibraryContext): DomainHandlers<'media'> {
  const { deps } = c;
  const { session } = deps;
  return {
    preview: async ({ id }, ctx) => {
      const input = await c.localFile(id, ctx.signal);
      const target = c.out(id, 'preview.mp4');
      return c.task(id, 'preview', target, (o) => deps.media().previewProxy(input, target, o), ctx.signal);
    },
    trim: async ({ id, start, end }, ctx) => {
      const input = await c.localFile(id, ctx.signal);
      const target = c.exported(id, `trim-${start}-${end}.mp4`);
      return c.task(id, 'trim', target, (o) => deps.media().trim(input, target, { ...o, start, end }), ctx.signal);
    },
    cancel: ({ taskId }) => {
      const controller = c.tasks.get(taskId);
      if (!controller) throw ipcError('not_found', `No running media task ${taskId}`);
      controller.abort();
      return { ok: true as const };
    },
    sequence: async (input, ctx) => {
      const s = await session();
      const purpose = input.purpose ?? 'preview';
      // A chain's shots with their chain trims, or the items given with the trims given.
      const clips =
        'chainId' in input
          ? s.library.chains.chain(input.chainId).map((shot) => ({ id: shot.itemId, trim: shot.trim }))
          : input.itemIds.map((id, n) => ({ id, trim: input.trims?.[n] ?? null }));
      if ('chainId' in input && clips.length === 0) throw ipcError('not_found', `No shot chain ${input.chainId}`);
      const inputs: string[] = [];
      for (const clip of clips) inputs.push(await shotFile(c.files(s), clip.id, ctx.signal, clip.trim));
      // Items given one by one: named after the first and a digest of the whole (items and trims),
      // so another cut of the same items never replaces this one.
      const chainId =
        'chainId' in input
          ? input.chainId
          : `${clips[0]!.id}-${createHash('sha256').update(JSON.stringify(clips)).digest('hex').slice(0, 8)}`;
      const name = `sequence-${clips.length}-shots.mp4`;
      const preview = purpose === 'preview';
      const target = preview ? c.out(chainId, name) : c.exported(chainId, name);
      // The preview is a quick proxy; the export is encoded for keeps. Both take the first shot's
      // frame size and rate, and fit every other shot into it (sequence.ts).
      return c.task(
        chainId,
        `sequence:${purpose}`,
        target,
        (o) => deps.media().sequence(inputs, target, { ...o, ...(preview ? { preset: 'veryfast', crf: 26 } : {}) }),
        ctx.signal,
      );
    },
  };
}

export function libraryHandlers(deps: LibraryDeps): {
  library: DomainHandlers<'library'>;
  collections: DomainHandlers<'collections'>;
  media: DomainHandlers<'media'>;
} {
  const c = libraryContext(deps);
  return {
    library: { ...libraryItemRoutes(c), ...libraryFileRoutes(c) },
    collections: collectionRoutes(c),
    media: mediaRoutes(c),
  };
}
