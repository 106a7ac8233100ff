import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { z } from 'zod';
import { atomicWriteFile } from '../../../shared/node/atomic-write.ts';
import { transaction } from './db.ts';

/**
 * Shot chains (docs/workflows.md): "Continue this shot" makes a new shot from an item's last frame, and the
 * result joins the item's chain right after it. A chain is linear: its id is its first shot's
 * item id and positions count 1, 2, 3 … Continuing a shot that already has a successor starts a
 * new chain (a branch) whose first shot still names its parent, so no chain ever has two shots at
 * one position and a sequence is always one path.
 */
export interface Shot {
  itemId: string;
  chainId: string;
  /** 1-based place in the chain. */
  position: number;
  /** The item this shot continues; null for a chain's first shot. */
  parentId: string | null;
  /** SHA-256 (hex) of the start frame bytes that were uploaded; null when unknown or none. */
  sourceSha256: string | null;
  /** The start frame as a lasting reference (`clipdesk-media:<id>` or the URL given). */
  sourceImage: string | null;
  /** The shot is used trimmed in its chain: its sequence part and its last frame come from here. */
  trim: { start: number; end: number } | null;
  createdAt: number;
}

/** The `lineage` object of a JSON sidecar: what a rebuild from sidecars alone needs. */
export const SidecarLineage = z.object({
  chainId: z.string().min(1),
  position: z.number().int().min(1),
  parentId: z.string().min(1).nullable(),
  sourceImageSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(),
  trim: z.object({ start: z.number().nonnegative(), end: z.number().positive() }).nullable().optional(),
});
export type SidecarLineage = z.infer<typeof SidecarLineage>;

export function sidecarLineage(shot: Shot): SidecarLineage {
  return {
    chainId: shot.chainId,
    position: shot.position,
    parentId: shot.parentId,
    sourceImageSha256: shot.sourceSha256,
    trim: shot.trim,
  };
}

interface Row {
  item_id: string;
  chain_id: string;
  position: number;
  parent_id: string | null;
  source_sha256: string | null;
  source_image: string | null;
  trim_start: number | null;
  trim_end: number | null;
  created_at: number;
}

const toShot = (r: Row): Shot => ({
  itemId: r.item_id,
  chainId: r.chain_id,
  position: r.position,
  parentId: r.parent_id,
  sourceSha256: r.source_sha256,
  sourceImage: r.source_image,
  trim: r.trim_start !== null && r.trim_end !== null ? { start: r.trim_start, end: r.trim_end } : null,
  createdAt: r.created_at,
});

export type ShotChains = ReturnType<typeof createShotChains>;

/** A shot read back from a sidecar: its item, its lineage, and the start frame it was made from. */
type RestoredShot = { itemId: string; lineage: SidecarLineage; sourceImage: string | null };

/** For tiles: each listed item's chain, place and chain length. */
function chainBadges(
  db: DatabaseSync,
  itemIds: readonly string[],
): Map<string, { chainId: string; position: number; length: number }> {
  const out = new Map<string, { chainId: string; position: number; length: number }>();
  if (itemIds.length === 0) return out;
  const rows = db
    .prepare(
      `SELECT s.item_id, s.chain_id, s.position, (SELECT count(*) FROM library_shots c WHERE c.chain_id = s.chain_id) AS length
       FROM library_shots s WHERE s.item_id IN (${itemIds.map(() => '?').join(',')})`,
    )
    .all(...itemIds) as { item_id: string; chain_id: string; position: number; length: number }[];
  // A first shot nobody continued (yet) is not shown as a chain.
  for (const r of rows)
    if (r.length > 1) out.set(r.item_id, { chainId: r.chain_id, position: r.position, length: r.length });
  return out;
}

/** Jobs submitted to continue a shot, until their result is in the index (table library_shot_jobs). */
function shotJobs(db: DatabaseSync, now: () => number) {
  return {
    /** At submit: the job continues `parentId`. */
    rememberJob(jobId: string, parentId: string): void {
      db.prepare('INSERT OR REPLACE INTO library_shot_jobs (job_id, parent_id, created_at) VALUES (?, ?, ?)').run(
        jobId,
        parentId,
        now(),
      );
    },
    jobParent(jobId: string): string | null {
      return (
        (
          db.prepare('SELECT parent_id FROM library_shot_jobs WHERE job_id = ?').get(jobId) as
            { parent_id: string } | undefined
        )?.parent_id ?? null
      );
    },
    forgetJob(jobId: string): void {
      db.prepare('DELETE FROM library_shot_jobs WHERE job_id = ?').run(jobId);
    },
  };
}

/**
 * Puts back lineage read from sidecars (a library rebuilt from its files). Shots already
 * known are kept; a chain's first shot whose own sidecar predates the chain is inferred from
 * its successor (parent = chain id, position 2). Returns how many shots were added.
 */
function restoreShots(db: DatabaseSync, now: () => number, entries: readonly RestoredShot[]): number {
  const sorted = [...entries].sort((a, b) => a.lineage.position - b.lineage.position);
  const add = db.prepare(
    `INSERT OR IGNORE INTO library_shots (item_id, chain_id, position, parent_id, source_sha256, source_image, trim_start, trim_end, created_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let added = 0;
  transaction(db, () => {
    for (const { itemId, lineage: l, sourceImage } of sorted) {
      if (l.position === 2 && l.parentId === l.chainId)
        added += Number(add.run(l.chainId, l.chainId, 1, null, null, null, null, null, now()).changes);
      added += Number(
        add.run(
          itemId,
          l.chainId,
          l.position,
          l.parentId,
          l.sourceImageSha256,
          sourceImage,
          l.trim?.start ?? null,
          l.trim?.end ?? null,
          now(),
        ).changes,
      );
    }
  });
  return added;
}

/** Gives the chain's shots the places 1, 2, 3 … in `order`, inside the caller's transaction. */
function renumber(db: DatabaseSync, order: readonly Shot[]): void {
  const place = db.prepare('UPDATE library_shots SET position = ? WHERE item_id = ?');
  // Through negative places first: UNIQUE (chain_id, position) holds after every single update.
  order.forEach((s, i) => place.run(-(i + 1), s.itemId));
  order.forEach((s, i) => place.run(i + 1, s.itemId));
}

/** Lineage in the library index (tables library_shots and library_shot_jobs, schema version 2). */
export function createShotChains(db: DatabaseSync, now: () => number) {
  const get = (itemId: string): Shot | null => {
    const row = db.prepare('SELECT * FROM library_shots WHERE item_id = ?').get(itemId) as Row | undefined;
    return row ? toShot(row) : null;
  };
  const chain = (chainId: string): Shot[] =>
    (
      db.prepare('SELECT * FROM library_shots WHERE chain_id = ? ORDER BY position').all(chainId) as unknown as Row[]
    ).map(toShot);
  const insert = (s: Shot): void => {
    db.prepare(
      `INSERT INTO library_shots (item_id, chain_id, position, parent_id, source_sha256, source_image, trim_start, trim_end, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      s.itemId,
      s.chainId,
      s.position,
      s.parentId,
      s.sourceSha256,
      s.sourceImage,
      s.trim?.start ?? null,
      s.trim?.end ?? null,
      s.createdAt,
    );
  };
  /** The item's shot, making it the first shot of a chain of its own when it has none. */
  const ensureRoot = (itemId: string): { shot: Shot; created: boolean } => {
    const existing = get(itemId);
    if (existing) return { shot: existing, created: false };
    const shot: Shot = {
      itemId,
      chainId: itemId,
      position: 1,
      parentId: null,
      sourceSha256: null,
      sourceImage: null,
      trim: null,
      createdAt: now(),
    };
    insert(shot);
    return { shot, created: true };
  };

  return {
    get,
    /** The chain's shots in order. */
    chain,
    /** The shots of the chain `itemId` belongs to, in order; empty when it is in none. */
    chainOf(itemId: string): Shot[] {
      const shot = get(itemId);
      return shot ? chain(shot.chainId) : [];
    },
    /** For tiles: each listed item's chain, place and chain length. */
    badges: (itemIds: readonly string[]) => chainBadges(db, itemIds),

    ...shotJobs(db, now),

    /**
     * `itemId` continues `parentId`: it goes right after the parent in the parent's chain (the
     * parent becomes a chain's first shot when it was in none), or starts a branch when the parent
     * already has a successor. Idempotent: a shot already recorded is returned as it is.
     * `root` is the parent's shot when this call made it a chain's first shot (its sidecar then
     * needs the lineage too).
     */
    continueShot(
      itemId: string,
      parentId: string,
      source: { sha256: string | null; image: string | null },
    ): { shot: Shot; root: Shot | null } {
      return transaction(db, () => {
        const existing = get(itemId);
        if (existing) return { shot: existing, root: null };
        const parent = ensureRoot(parentId);
        const next = db
          .prepare('SELECT 1 FROM library_shots WHERE chain_id = ? AND position = ?')
          .get(parent.shot.chainId, parent.shot.position + 1);
        const shot: Shot = {
          itemId,
          chainId: next ? itemId : parent.shot.chainId,
          position: next ? 1 : parent.shot.position + 1,
          parentId,
          sourceSha256: source.sha256,
          sourceImage: source.image,
          trim: null,
          createdAt: now(),
        };
        insert(shot);
        return { shot, root: parent.created ? parent.shot : null };
      });
    },

    /** In and out points of a shot in its chain (a clip in no chain becomes a chain of one); null clears them. */
    setTrim(itemId: string, trim: { start: number; end: number } | null): Shot {
      if (trim && !(trim.start >= 0 && trim.end > trim.start))
        throw new Error('The out point must be after the in point');
      return transaction(db, () => {
        ensureRoot(itemId);
        db.prepare('UPDATE library_shots SET trim_start = ?, trim_end = ? WHERE item_id = ?').run(
          trim?.start ?? null,
          trim?.end ?? null,
          itemId,
        );
        return get(itemId)!;
      });
    },

    /**
     * Moves a shot to `position` (1-based, clamped to the chain) in its chain; the others close up in
     * their order. Only places change: each shot keeps the item it continued (its lineage) and its trim,
     * and the chain keeps its id. Returns the chain in its new order.
     */
    moveShot(itemId: string, position: number): Shot[] {
      return transaction(db, () => {
        const shot = get(itemId);
        if (!shot) throw new Error(`${itemId} is not a shot of a chain`);
        const order = chain(shot.chainId).filter((s) => s.itemId !== itemId);
        const at = Math.min(Math.max(1, Math.round(position)), order.length + 1);
        order.splice(at - 1, 0, shot);
        renumber(db, order);
        return chain(shot.chainId);
      });
    },

    /**
     * Puts back lineage read from sidecars (a library rebuilt from its files). Shots already
     * known are kept; a chain's first shot whose own sidecar predates the chain is inferred from
     * its successor (parent = chain id, position 2). Returns how many shots were added.
     */
    restore: (entries: readonly RestoredShot[]): number => restoreShots(db, now, entries),
  };
}

/** Sets (or replaces) the `lineage` of a sidecar file; a missing or unreadable sidecar is left alone. */
export async function writeSidecarLineage(sidecarPath: string, shot: Shot): Promise<boolean> {
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(await readFile(sidecarPath, 'utf8')) as Record<string, unknown>;
  } catch {
    return false;
  }
  data['lineage'] = sidecarLineage(shot);
  if (shot.sourceImage && !data['sourceImage']) data['sourceImage'] = shot.sourceImage;
  await atomicWriteFile(sidecarPath, `${JSON.stringify(data, null, 2)}\n`);
  return true;
}

/** Sidecars under `dir` (recursively) that carry lineage, for ShotChains.restore. */
export async function readSidecarLineages(
  dir: string,
): Promise<{ itemId: string; lineage: SidecarLineage; sourceImage: string | null; file: string }[]> {
  const out: { itemId: string; lineage: SidecarLineage; sourceImage: string | null; file: string }[] = [];
  const walk = async (folder: string, depth: number): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      const full = path.join(folder, e.name);
      if (e.isDirectory() && depth < 6 && !e.name.startsWith('.')) await walk(full, depth + 1);
      else if (e.isFile() && e.name.endsWith('.json') && !e.name.endsWith('.part.json')) {
        const info = await stat(full).catch(() => null);
        if (!info || info.size > 1_000_000) continue;
        try {
          const data = JSON.parse(await readFile(full, 'utf8')) as Record<string, unknown>;
          const lineage = SidecarLineage.safeParse(data['lineage']);
          if (typeof data['id'] === 'string' && lineage.success) {
            const source = data['sourceImage'];
            out.push({
              itemId: data['id'],
              lineage: lineage.data,
              sourceImage: typeof source === 'string' ? source : null,
              file: full,
            });
          }
        } catch {
          // Not a sidecar of ours.
        }
      }
    }
  };
  await walk(dir, 0);
  return out;
}
