import { createHash } from 'node:crypto';
import { CoreError } from '../errors.ts';
import type { SequenceOptions } from '../media/index.ts';
import type { ShotChains } from './chains.ts';

/** A clip of a sequence: an item, whole or between in and out points (seconds). */
export interface SequenceClip {
  id: string;
  trim: { start: number; end: number } | null;
}

/**
 * Items given one by one are named after the first and a digest of the whole (items and trims),
 * so another cut of the same items never replaces this one.
 */
export function sequenceOutputId(clips: readonly SequenceClip[]): string {
  return `${clips[0]!.id}-${createHash('sha256').update(JSON.stringify(clips)).digest('hex').slice(0, 8)}`;
}

export const sequenceFileName = (count: number): string => `sequence-${count}-shots.mp4`;

/**
 * The preview is a quick proxy; the export is encoded for keeps. Both take the first shot's frame
 * size and rate, and fit every other shot into it (sequence.ts).
 */
export const sequenceEncoding = (preview: boolean): Pick<SequenceOptions, 'preset' | 'crf'> =>
  preview ? { preset: 'veryfast', crf: 26 } : {};

/** A sequence asked for: a chain's shots, or items in the order given, each optionally trimmed. */
export type SequenceRequest =
  { chainId: string } | { itemIds: readonly string[]; trims?: readonly (SequenceClip['trim'] | null)[] | undefined };

/** A chain's shots with their chain trims, or the items given with the trims given. */
export function sequenceClips(chains: Pick<ShotChains, 'chain'>, request: SequenceRequest): SequenceClip[] {
  if ('chainId' in request) {
    const clips = chains.chain(request.chainId).map((shot) => ({ id: shot.itemId, trim: shot.trim }));
    if (clips.length === 0) throw new CoreError('not_found', `No shot chain ${request.chainId}`);
    return clips;
  }
  return request.itemIds.map((id, n) => ({ id, trim: request.trims?.[n] ?? null }));
}

/** What a sequence's files are named after: its chain, or its clips' digest. */
export const sequenceId = (request: SequenceRequest, clips: readonly SequenceClip[]): string =>
  'chainId' in request ? request.chainId : sequenceOutputId(clips);
