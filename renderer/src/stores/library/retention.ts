import type { LibraryItem, RetentionPolicy } from '../../../../shared/ipc/index.ts';

/**
 * Whether and when the service deletes an item, said one way everywhere: the library tile's
 * badge, the detail's notice and whether the detail offers Keep all come from `retentionView`, so
 * one clip can never read "Saved" in one place and offer Keep in another.
 *
 * - lost: the service deleted it before it was downloaded.
 * - downloaded: a copy is on disk, and an owner's download exempts the item on the service.
 * - kept: the service will not delete it (retained for good, or exempt for another reason).
 * - expires: deleted on `deadline` unless kept (or downloaded).
 */
export type RetentionState =
  { kind: 'lost' } | { kind: 'downloaded' } | { kind: 'kept' } | { kind: 'expires'; deadline: number; days: number };

export interface RetentionView {
  state: RetentionState;
  /** Short text for the tile's badge. */
  badge: string;
  tone: 'danger' | 'warning' | 'info' | 'success';
  /** The sentence the detail shows. */
  notice: string;
  /** Whether "Keep" still changes anything. */
  canKeep: boolean;
}

/** Within this many days the badge and notice turn to a warning. */
export const SOON_DAYS = 3;
const DAY_MS = 86_400_000;

/** The local calendar date's midnight of an instant. */
function startOfDay(t: number): number {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

/**
 * Whole calendar days from `now`'s date to the deadline's date (0 = today). Counted by dates, not
 * by 24-hour spans rounded up, so the count changes once a day, at midnight, and always agrees
 * with the date shown: a clip made a minute after the screen read the clock no longer reads "91
 * days" and then "90" for a 90-day retention. Rounding absorbs a daylight-saving hour.
 */
export function daysUntilDate(deadline: number, now: number): number {
  return Math.max(0, Math.round((startOfDay(deadline) - startOfDay(now)) / DAY_MS));
}

export function retentionState(entry: LibraryItem, now: number): RetentionState {
  if (entry.lost) return { kind: 'lost' };
  if (entry.localPath) return { kind: 'downloaded' };
  const deadline = entry.retentionDeadline ? Date.parse(entry.retentionDeadline) : Number.NaN;
  if (!Number.isFinite(deadline)) return { kind: 'kept' };
  return { kind: 'expires', deadline, days: daysUntilDate(deadline, now) };
}

/** "21 Feb 2027": the deletion date, without a time (the guard's and the service's clocks differ by minutes). */
export function formatDeletionDate(deadline: number): string {
  return new Date(deadline).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** Whether the app's retention guard downloads the item before its deadline (Settings → Retention guard). */
function guarded(entry: LibraryItem, policy: RetentionPolicy | undefined): boolean {
  return policy === 'mine' || (policy === 'favourites' && entry.favourite);
}

export function retentionView(entry: LibraryItem, now: number, policy?: RetentionPolicy): RetentionView {
  const state = retentionState(entry, now);
  switch (state.kind) {
    case 'lost':
      return {
        state,
        badge: 'Deleted by service',
        tone: 'danger',
        notice: 'The service deleted this item before it was downloaded.',
        canKeep: false,
      };
    case 'downloaded':
      return {
        state,
        badge: 'Downloaded',
        tone: 'success',
        notice: 'Downloaded, so it is kept: the service does not delete it.',
        canKeep: false,
      };
    case 'kept':
      return { state, badge: 'Kept', tone: 'success', notice: 'Kept: the service does not delete it.', canKeep: false };
    case 'expires': {
      const { days } = state;
      const badge = days === 0 ? 'Deleted today' : days === 1 ? 'Deleted tomorrow' : `Deleted in ${days} days`;
      const when = days === 0 ? 'today' : `on ${formatDeletionDate(state.deadline)}`;
      return {
        state,
        badge,
        tone: days <= SOON_DAYS ? 'warning' : 'info',
        notice: `Deleted by the service ${when} unless kept.${guarded(entry, policy) ? ' The retention guard downloads it before then.' : ''}`,
        canKeep: true,
      };
    }
  }
}
