import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, renameSync, statSync } from 'node:fs';
import path from 'node:path';
import type { MediaTools, ProgressState } from '../../core/media/index.ts';
import type { LibraryQuery as CoreQuery } from '../../core/library/index.ts';
import { buildLibraryQuery, createUrlRefresher } from '../../core/library/index.ts';
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

/**
 * Matching items over all pages: the page query without cursor, order and limit, counted. Counting
 * is the one costly part of a page (thousands of matches against one page's 51 rows: 20–30 ms on
 * 30,000 items), paid on main's thread; so a count is kept until the index changes. The next page
 * of a grid, and the requery every job event makes, then cost nothing. `total_changes()` counts
 * every row this connection wrote (the app's only one on the index, triggers included): any
 * write makes the kept counts stale.
 */
const COUNTS_KEPT = 32;
const counts = new WeakMap<ServiceSession, { version: number; byQuery: Map<string, number> }>();

function countMatching(s: ServiceSession, q: CoreQuery, now: number): number {
  const built = buildLibraryQuery({ ...q, cursor: null, limit: 1 }, now);
  const sql = built.sql.replace(/ ORDER BY [^ ]+ (ASC|DESC) LIMIT \?$/, '');
  if (sql === built.sql) return -1;
  const params = built.params.slice(0, -1);
  const version = (s.library.db.prepare('SELECT total_changes() AS v').get() as { v: number }).v;
  let kept = counts.get(s);
  if (!kept || kept.version !== version) {
    kept = { version, byQuery: new Map() };
    counts.set(s, kept);
  }
  const key = JSON.stringify([sql, params]);
  const known = kept.byQuery.get(key);
  if (known !== undefined) return known;
  // A search and nothing else but live items (the page's default): the full-text index counts its
  // matches alone (0.3 ms for 4,000 of 30,000 items, against 20 ms joined to the items' rows), less
  // the lost ones among them when there are any (their partial index answers that at once; taking
  // them off costs ~10 ms, so only then). It indexes exactly the items' rows.
  const search = ' FROM library_fts f CROSS JOIN library_items i ON i.rowid = f.rowid WHERE library_fts MATCH ?';
  const live = sql.endsWith(`${search} AND i.lost_at IS NULL`);
  const n =
    sql.endsWith(search) || live
      ? count(s, 'SELECT count(*) AS n FROM library_fts WHERE library_fts MATCH ?', params) -
        (live &&
        count(s, 'SELECT count(*) AS n FROM (SELECT 1 FROM library_items WHERE lost_at IS NOT NULL LIMIT 1)', []) > 0
          ? count(
              s,
              'SELECT count(*) AS n FROM library_items WHERE lost_at IS NOT NULL AND rowid IN (SELECT rowid FROM library_fts WHERE library_fts MATCH ?)',
              params,
            )
          : 0)
      : count(s, `SELECT count(*) AS n FROM (${sql})`, params);
  if (kept.byQuery.size >= COUNTS_KEPT) kept.byQuery.delete(kept.byQuery.keys().next().value!);
  kept.byQuery.set(key, n);
  return n;
}

function count(s: ServiceSession, sql: string, params: (string | number)[]): number {
  return (s.library.db.prepare(sql).get(...params) as { n: number }).n;
}

function collectionIdsOf(s: ServiceSession, ids: readonly string[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (ids.length === 0) return out;
  const rows = s.library.db
    .prepare(
      `SELECT item_id, collection_id FROM library_collection_items WHERE item_id IN (${ids.map(() => '?').join(',')})`,
    )
    .all(...ids) as { item_id: string; collection_id: string }[];
  for (const r of rows) out.set(r.item_id, [...(out.get(r.item_id) ?? []), r.collection_id]);
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

export function libraryHandlers(deps: LibraryDeps): {
  library: DomainHandlers<'library'>;
  collections: DomainHandlers<'collections'>;
  media: DomainHandlers<'media'>;
} {
  const { session, bus } = deps;
  const tasks = new Map<string, AbortController>();
  /** Signed URLs expire on the service; one refresher per session keeps those we hand out working. */
  const refreshers = new WeakMap<ServiceSession, UrlRefresher>();
  const refresher = (s: ServiceSession): UrlRefresher => {
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
  };

  const item = async (id: string) => {
    const s = await session();
    const entry = s.library.get(id);
    if (!entry) throw ipcError('not_found', `No library item ${id}`);
    return { s, entry };
  };
  const view = (s: ServiceSession, id: string) => {
    const entry = s.library.get(id);
    if (!entry) throw ipcError('not_found', `No library item ${id}`);
    return toLibraryItem(
      entry,
      collectionIdsOf(s, [id]).get(id) ?? [],
      deps.mediaUrl,
      s.library.chains.badges([id]).get(id) ?? null,
    );
  };
  const chainView = (s: ServiceSession, id: string): ChainView => {
    const shots = s.library.chains.chainOf(id);
    return {
      chainId: shots[0]?.chainId ?? null,
      shots: shots.map((shot) => ({
        itemId: shot.itemId,
        position: shot.position,
        parentId: shot.parentId,
        sourceImageSha256: shot.sourceSha256,
        trim: shot.trim,
        item: s.library.get(shot.itemId) ? view(s, shot.itemId) : null,
      })),
    };
  };
  const safe = (id: string) => id.replace(/[^a-zA-Z0-9_-]/g, '_');
  /**
   * The file a chain uses for a shot: the clip itself, or its trimmed part (made once into the
   * work folder) when the shot is used trimmed. Its last frame is what "Continue this shot" takes.
   */
  const shotFile = async (
    s: ServiceSession,
    id: string,
    signal?: AbortSignal,
    trim = s.library.chains.get(id)?.trim,
  ): Promise<string> => {
    const input = await localFile(id, signal);
    if (!trim) return input;
    const target = path.join(deps.workDir, 'shots', `${safe(id)}-trim-${trim.start}-${trim.end}.mp4`);
    if (statSync(target, { throwIfNoEntry: false })?.isFile()) return target;
    const part = `${target}.part.mp4`;
    mkdirSync(path.dirname(target), { recursive: true });
    await deps.media().trim(input, part, { start: trim.start, end: trim.end, ...(signal ? { signal } : {}) });
    renameSync(part, target);
    return target;
  };
  /** The item's file on disk, downloading it first when needed. */
  const localFile = async (id: string, signal?: AbortSignal): Promise<string> => {
    const { s, entry } = await item(id);
    if (entry.downloadedPath) {
      try {
        if (statSync(entry.downloadedPath).isFile()) return entry.downloadedPath;
      } catch {
        // Moved or deleted: download again.
      }
    }
    if (entry.lostAt !== null) throw ipcError('not_found_error', 'The service deleted this item before it was saved.');
    const result = await s.downloads.download({ item: entry.item, ...(signal ? { signal } : {}) });
    s.library.markDownloaded(id, result.path);
    bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } });
    return result.path;
  };
  /** One ffmpeg task with progress events and a cancel handle. */
  const task = async (
    itemId: string,
    operation: string,
    output: string,
    run: (opts: { signal: AbortSignal; onProgress: (p: ProgressState) => void }) => Promise<unknown>,
    signal?: AbortSignal,
  ): Promise<LocalFile> => {
    const id = `task:${randomUUID()}`;
    const controller = new AbortController();
    signal?.addEventListener('abort', () => controller.abort());
    tasks.set(id, controller);
    const emit = (state: 'running' | 'done' | 'failed' | 'canceled', progress: number | null) =>
      bus.publish({ type: 'media.task', task: { id, itemId, operation, progress, state } });
    emit('running', 0);
    mkdirSync(path.dirname(output), { recursive: true });
    try {
      await run({
        signal: controller.signal,
        onProgress: (p) => emit('running', p.fraction === null ? null : Math.min(1, Math.max(0, p.fraction))),
      });
      emit('done', 1);
    } catch (error) {
      emit(controller.signal.aborted ? 'canceled' : 'failed', null);
      throw error;
    } finally {
      tasks.delete(id);
    }
    const url = deps.mediaUrl(output);
    if (!url) throw ipcError('internal_error', 'The output is outside the media folders.');
    return { path: output, url, mime: mimeForPath(output), bytes: statSync(output).size };
  };
  /** Working files (previews): the app's media folder. */
  const out = (id: string, name: string) => path.join(deps.workDir, 'exports', `${safe(id)}-${name}`);
  /** What the creator exports (clips, trims, sequences): the download folder from settings. */
  const exported = (id: string, name: string) => path.join(deps.downloadDir(), 'exports', `${safe(id)}-${name}`);

  const library: DomainHandlers<'library'> = {
    query: async (q) => {
      const s = await session();
      const core = toCoreQuery(q);
      const page = s.library.query(core);
      refresher(s).refreshInBackground(page.items);
      const ids = collectionIdsOf(
        s,
        page.items.map((i) => i.item.id),
      );
      const chains = s.library.chains.badges(page.items.map((i) => i.item.id));
      const total = countMatching(s, core, deps.now());
      return {
        items: page.items.map((e) =>
          toLibraryItem(e, ids.get(e.item.id) ?? [], deps.mediaUrl, chains.get(e.item.id) ?? null),
        ),
        nextCursor: page.nextCursor,
        total: total >= 0 ? total : page.items.length,
      };
    },
    get: async ({ id }, ctx) => {
      const { s, entry } = await item(id);
      // The detail view plays the item now: an expired URL is renewed before it is handed out.
      await refresher(s).refreshItem(entry, ctx.signal);
      return view(s, id);
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
      const { s } = await item(id);
      const updated = await s.api.retainMedia(
        id,
        { ...(days ? { days } : {}), ...(forever ? { forever } : {}) },
        { signal: ctx.signal },
      );
      if (updated) s.library.upsert([updated]);
      else await s.sync.sync(ctx.signal).catch(() => undefined);
      bus.publish({ type: 'library.changed', change: { reason: 'retention', ids: [id] } });
      return view(s, id);
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
        s.downloads.download({ item: entry.item }).then(
          (r) => {
            s.library.markDownloaded(id, r.path);
            bus.publish({ type: 'library.changed', change: { reason: 'download', ids: [id] } });
            bus.publish({
              type: 'transfer.progress',
              transfer: {
                id: `download:${id}`,
                direction: 'download',
                jobId: null,
                itemId: id,
                done: r.bytes,
                total: r.bytes,
                state: 'done',
                error: null,
              },
            });
          },
          (error: unknown) =>
            bus.publish({
              type: 'transfer.progress',
              transfer: {
                id: `download:${id}`,
                direction: 'download',
                jobId: null,
                itemId: id,
                done: 0,
                total: null,
                state: 'failed',
                error: error instanceof Error ? error.message : String(error),
              },
            }),
        );
      }
      return { queued, present };
    },
    reveal: async ({ id }, ctx) => {
      const file = await localFile(id, ctx.signal);
      return { path: file, revealed: await deps.platform.revealPath(file) };
    },
    export: async ({ id, format, at, columns, rows }, ctx) => {
      const input = await localFile(id, ctx.signal);
      const media = deps.media();
      const target = exported(id, `${format}${format === 'frame' ? `-${at ?? 0}` : ''}.${EXT[format]}`);
      return task(
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
              const c = columns ?? 4;
              return media.contactSheet(input, target, { ...o, frames: c * (rows ?? 3), columns: c });
            }
          }
        },
        ctx.signal,
      );
    },
    useLastFrame: async ({ id }, ctx) => {
      // A shot used trimmed in its chain continues from its out point.
      const input = await shotFile(await session(), id, ctx.signal);
      const target = path.join(deps.workDir, 'frames', `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}-last.png`);
      return task(id, 'lastFrame', target, (o) => deps.media().lastFrame(input, target, o), ctx.signal);
    },
    feed: async (q, ctx) => publicFeedPage((await session()).api, q, { signal: ctx.signal }),
    chain: async ({ id }) => chainView(await session(), id),
    setShotTrim: async (input) => {
      const { s, entry } = await item(input.id);
      if (entry.item.media !== 'video') throw ipcError('invalid_input', 'Only a video can be trimmed.');
      if ('start' in input && entry.item.duration > 0 && input.start >= entry.item.duration)
        throw ipcError('invalid_input', `The in point must be before the clip's end (${entry.item.duration} s).`);
      const trim =
        'start' in input ? { start: input.start, end: Math.min(input.end, entry.item.duration || input.end) } : null;
      const shot = s.library.chains.setTrim(input.id, trim);
      await updateSidecarOf(s.library, shot);
      bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: [input.id] } });
      return chainView(s, input.id);
    },
    restoreChains: async () => {
      const s = await session();
      const added = await restoreChainsFromSidecars(s.library, deps.downloadDir(), true);
      if (added > 0) bus.publish({ type: 'library.changed', change: { reason: 'chain', ids: [] } });
      return { added };
    },
    downloadAgain: async ({ id }, ctx) => {
      const { s, entry } = await item(id);
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
      return view(s, id);
    },
  };

  const collectionsList = async () => {
    const s = await session();
    return { collections: s.library.collections().map((c) => ({ id: c.id, name: c.name, count: c.size })) };
  };
  const changed = async (ids: string[] = []) => {
    bus.publish({ type: 'library.changed', change: { reason: 'collection', ids } });
    return collectionsList();
  };
  const collections: DomainHandlers<'collections'> = {
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

  const media: DomainHandlers<'media'> = {
    preview: async ({ id }, ctx) => {
      const input = await localFile(id, ctx.signal);
      const target = out(id, 'preview.mp4');
      return task(id, 'preview', target, (o) => deps.media().previewProxy(input, target, o), ctx.signal);
    },
    trim: async ({ id, start, end }, ctx) => {
      const input = await localFile(id, ctx.signal);
      const target = exported(id, `trim-${start}-${end}.mp4`);
      return task(id, 'trim', target, (o) => deps.media().trim(input, target, { ...o, start, end }), ctx.signal);
    },
    cancel: ({ taskId }) => {
      const c = tasks.get(taskId);
      if (!c) throw ipcError('not_found', `No running media task ${taskId}`);
      c.abort();
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
      for (const clip of clips) inputs.push(await shotFile(s, clip.id, ctx.signal, clip.trim));
      // Items given one by one: named after the first and a digest of the whole (items and trims),
      // so another cut of the same items never replaces this one.
      const chainId =
        'chainId' in input
          ? input.chainId
          : `${clips[0]!.id}-${createHash('sha256').update(JSON.stringify(clips)).digest('hex').slice(0, 8)}`;
      const name = `sequence-${clips.length}-shots.mp4`;
      const preview = purpose === 'preview';
      const target = preview ? out(chainId, name) : exported(chainId, name);
      // The preview is a quick proxy; the export is encoded for keeps. Both take the first shot's
      // frame size and rate, and fit every other shot into it (sequence.ts).
      return task(
        chainId,
        `sequence:${purpose}`,
        target,
        (o) => deps.media().sequence(inputs, target, { ...o, ...(preview ? { preset: 'veryfast', crf: 26 } : {}) }),
        ctx.signal,
      );
    },
  };
  return { library, collections, media };
}
