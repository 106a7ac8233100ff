import { statSync } from 'node:fs';
import type { MediaTools } from '../../core/media/index.ts';
import type {
  DownloadOutcome,
  ItemFileDeps,
  LibraryQuery as CoreQuery,
  MediaTaskRunOptions,
  MediaTasks,
  UrlRefresher,
} from '../../core/library/index.ts';
import {
  collectionIdsOf,
  createMediaTasks,
  createUrlRefresher,
  downloadAgain,
  exportFileName,
  exportMedia,
  itemOutput,
  listLibrary,
  lastFrameOutput,
  localFile,
  queueDownloads,
  retainItem,
  sequenceClips,
  sequenceEncoding,
  sequenceFileName,
  sequenceId,
  setFavourites,
  shotFile,
  shotTrimFor,
} from '../../core/library/index.ts';
import type { LibraryQuery, LocalFile } from '../../../shared/ipc/schemas/library.ts';
import { ipcError } from '../errors.ts';
import type { EventBus } from '../events.ts';
import { mimeForPath } from '../local-media.ts';
import { toDownloadEnd, toLibraryItem } from '../mappers.ts';
import { updateSidecarOf, restoreChainsFromSidecars } from '../shot-lineage.ts';
import type { ChainView } from '../../../shared/ipc/schemas/chains.ts';
import { publicFeedPage } from '../public-feed.ts';
import type { PlatformPort } from '../platform.ts';
import type { DomainHandlers, ServiceSession, SessionGetter } from '../types.ts';

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
  /** The hover-play proxy of an item, once made. */
  previewFile?: (itemId: string) => string | null;
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
  if (q.origin) out.origin = q.origin;
  if (q.expiringWithinHours) out.expiringWithinMs = q.expiringWithinHours * 3_600_000;
  if (q.cursor) out.cursor = q.cursor;
  return out;
}

/** What the library's routes share: the session, the running media tasks, and their views. */
interface LibraryContext {
  deps: LibraryDeps;
  tasks: MediaTasks;
  refresher(s: ServiceSession): UrlRefresher;
  item(id: string): Promise<{ s: ServiceSession; entry: NonNullable<ReturnType<ServiceSession['library']['get']>> }>;
  view(s: ServiceSession, id: string): ReturnType<typeof toLibraryItem>;
  chainView(s: ServiceSession, id: string): ChainView;
  files(s: ServiceSession): ItemFileDeps;
  /** The item's file on disk, downloading it first when needed. */
  localFile(id: string, signal?: AbortSignal): Promise<string>;
  /** One ffmpeg task with progress events and a cancel handle; its output as the renderer reaches it. */
  task(
    itemId: string,
    operation: string,
    output: string,
    run: (opts: MediaTaskRunOptions) => Promise<unknown>,
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
    tasks: createMediaTasks((task) => bus.publish({ type: 'media.task', task })),
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
        deps.previewFile?.(id) ?? null,
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
    task: async (itemId, operation, output, run, signal) =>
      toLocalFile(await c.tasks.run({ itemId, operation, output, run, signal }), deps.mediaUrl),
    out: (id, name) => itemOutput(deps.workDir, id, name),
    exported: (id, name) => itemOutput(deps.downloadDir(), id, name),
  };
  return c;
}

/** A task's output as the renderer reaches it: its media URL, type and size. */
function toLocalFile(file: string, mediaUrl: LibraryDeps['mediaUrl']): LocalFile {
  const url = mediaUrl(file);
  if (!url) throw ipcError('internal_error', 'The output is outside the media folders.');
  return { path: file, url, mime: mimeForPath(file), bytes: statSync(file).size };
}

/** A background download's end: the library changed (when saved), and the transfers list. */
function publishDownloadEnd(bus: EventBus, id: string, outcome: DownloadOutcome): void {
  if ('bytes' in outcome) bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } });
  bus.publish({ type: 'transfer.progress', transfer: toDownloadEnd(id, outcome) });
}

/** The library's reads and the item's own state (favourite, retention, downloads). */
function libraryItemRoutes(c: LibraryContext) {
  const { deps } = c;
  const { session, bus } = deps;
  return {
    query: async (q) => {
      const s = await session();
      const refresher = c.refresher(s);
      const { page, collections, chains, total } = listLibrary(s.library, toCoreQuery(q), deps.now(), (items) =>
        refresher.refreshInBackground(items),
      );
      return {
        items: page.items.map((e) =>
          toLibraryItem(
            e,
            collections.get(e.item.id) ?? [],
            deps.mediaUrl,
            chains.get(e.item.id) ?? null,
            deps.previewFile?.(e.item.id) ?? null,
          ),
        ),
        nextCursor: page.nextCursor,
        total,
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
      const updated = setFavourites((await session()).library, ids, favourite);
      bus.publish({ type: 'library.changed', change: { reason: 'favourite', ids } });
      return { updated };
    },
    retain: async ({ id, days, forever }, ctx) => {
      const { s } = await c.item(id);
      await retainItem(s, id, { days, forever }, ctx.signal);
      bus.publish({ type: 'library.changed', change: { reason: 'retention', ids: [id] } });
      return c.view(s, id);
    },
    download: async ({ ids }) => {
      const s = await session();
      return queueDownloads(s, ids, (id, outcome) => publishDownloadEnd(bus, id, outcome));
    },
    downloadAgain: async ({ id }, ctx) => {
      const { s } = await c.item(id);
      await downloadAgain(s, id, ctx.signal);
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
      const target = c.exported(id, exportFileName(format, at));
      return c.task(
        id,
        `export:${format}`,
        target,
        (o) => exportMedia(media, format, { input, target }, { at, columns, rows }, o),
        ctx.signal,
      );
    },
    useLastFrame: async ({ id }, ctx) => {
      // A shot used trimmed in its chain continues from its out point.
      const s = await session();
      const input = await shotFile(c.files(s), id, ctx.signal);
      const target = lastFrameOutput(deps.workDir, id);
      return c.task(id, 'lastFrame', target, (o) => deps.media().lastFrame(input, target, o), ctx.signal);
    },
    feed: async (q, ctx) => publicFeedPage((await session()).api, q, { signal: ctx.signal }),
    chain: async ({ id }) => c.chainView(await session(), id),
    setShotTrim: async (input) => {
      const { s, entry } = await c.item(input.id);
      const shot = s.library.chains.setTrim(input.id, shotTrimFor(entry.item, input));
      await updateSidecarOf(s.library, shot);
      bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: [input.id] } });
      return c.chainView(s, input.id);
    },
    moveShot: async ({ id, position }) => {
      const { s } = await c.item(id);
      const before = new Map(s.library.chains.chainOf(id).map((shot) => [shot.itemId, shot.position]));
      const after = s.library.chains.moveShot(id, position);
      // Each sidecar whose place changed says so, so a library rebuilt from them keeps the order.
      const moved = after.filter((shot) => before.get(shot.itemId) !== shot.position);
      for (const shot of moved) await updateSidecarOf(s.library, shot);
      if (moved.length > 0)
        bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: after.map((shot) => shot.itemId) } });
      return c.chainView(s, id);
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
      if (!c.tasks.cancel(taskId)) throw ipcError('not_found', `No running media task ${taskId}`);
      return { ok: true as const };
    },
    sequence: async (input, ctx) => {
      const s = await session();
      const purpose = input.purpose ?? 'preview';
      const clips = sequenceClips(s.library.chains, input);
      const inputs: string[] = [];
      for (const clip of clips) inputs.push(await shotFile(c.files(s), clip.id, ctx.signal, clip.trim));
      const outputId = sequenceId(input, clips);
      const preview = purpose === 'preview';
      const name = sequenceFileName(clips.length);
      const target = preview ? c.out(outputId, name) : c.exported(outputId, name);
      return c.task(
        outputId,
        `sequence:${purpose}`,
        target,
        (o) => deps.media().sequence(inputs, target, { ...o, ...sequenceEncoding(preview) }),
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
