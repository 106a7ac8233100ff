import { z } from 'zod';
import { LibraryItem } from './library.ts';

/** docs/workflows.md, shot chains: one shot of a chain, in order. */
export const ChainShot = z.object({
  itemId: z.string(),
  /** 1-based. */
  position: z.number().int().min(1),
  /** The item this shot continues; null for the first shot. */
  parentId: z.string().nullable(),
  /** SHA-256 (hex) of the start frame bytes uploaded for this shot. */
  sourceImageSha256: z.string().nullable(),
  /** In and out points (seconds) when the shot is used trimmed in the chain. */
  trim: z.object({ start: z.number(), end: z.number() }).nullable(),
  /** The item as the index knows it; null when it is not (yet) in the index. */
  item: LibraryItem.nullable(),
});
export type ChainShot = z.infer<typeof ChainShot>;

/** The chain an item belongs to; `chainId` null and no shots when it is in none. */
export const ChainView = z.object({
  chainId: z.string().nullable(),
  shots: z.array(ChainShot),
});
export type ChainView = z.infer<typeof ChainView>;

/** "Use trimmed clip in chain": in and out points in seconds; `clear` goes back to the whole clip. */
export const ShotTrimInput = z.union([
  z
    .object({ id: z.string().min(1).max(200), start: z.number().nonnegative(), end: z.number().positive() })
    .refine((t) => t.end > t.start, { message: 'the out point must be after the in point', path: ['end'] }),
  z.object({ id: z.string().min(1).max(200), clear: z.literal(true) }),
]);
export type ShotTrimInput = z.infer<typeof ShotTrimInput>;

/** Moves a shot to another place in its chain (1-based; past the end is the end). docs/workflows.md, shot chains. */
export const MoveShotInput = z.object({
  id: z.string().min(1).max(200),
  position: z.number().int().min(1).max(10_000),
});
export type MoveShotInput = z.infer<typeof MoveShotInput>;

const SequencePurpose = z.enum(['preview', 'export']).default('preview');
/** In and out points (seconds) of one clip of a sequence; null uses the whole clip. */
export const ClipTrim = z
  .object({ start: z.number().nonnegative(), end: z.number().positive() })
  .refine((t) => t.end > t.start, { message: 'the out point must be after the in point', path: ['end'] });

/**
 * Shots back to back: a preview proxy (app media folder) or an MP4 export (download folder). Either
 * a chain's shots (with their chain trims), or library items in the order given, each optionally
 * trimmed (`trims[i]` for `itemIds[i]`): what an agent cuts together (docs/agents.md).
 */
export const SequenceInput = z.union([
  z.object({ chainId: z.string().min(1).max(200), purpose: SequencePurpose }),
  z
    .object({
      itemIds: z.array(z.string().min(1).max(200)).min(1).max(100),
      trims: z.array(ClipTrim.nullable()).max(100).optional(),
      purpose: SequencePurpose,
    })
    .refine((s) => !s.trims || s.trims.length === s.itemIds.length, {
      message: 'give one trim (or null) per item',
      path: ['trims'],
    }),
]);
export type SequenceInput = z.input<typeof SequenceInput>;

export const RestoreChainsResult = z.object({ added: z.number().int().nonnegative() });
