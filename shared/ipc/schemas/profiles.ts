import { z } from 'zod';

/**
 * Where a profile's key is kept. `none`: no secure store is running (e.g. no Secret Service on
 * Linux); the key is then not stored and `KeyStatus.message` says so. `file`: the user's opt-in key
 * file (`--key-store file`). `env`: CLIPDESK_API_KEY, which wins over a stored key.
 */
export const KeyBackend = z.enum(['keychain', 'safeStorage', 'file', 'env', 'none']);
export type KeyBackend = z.infer<typeof KeyBackend>;

/** What the renderer may know about a key. The key itself never leaves main. */
export const KeyStatus = z.object({
  hasKey: z.boolean(),
  last4: z.string().max(4).nullable(),
  backend: KeyBackend,
  message: z.string().optional(),
});
export type KeyStatus = z.infer<typeof KeyStatus>;

export const ProfileKind = z.enum(['local', 'remote']);
export type ProfileKind = z.infer<typeof ProfileKind>;

export const Profile = z.object({
  id: z.string(),
  name: z.string(),
  kind: ProfileKind,
  /** The service's base URL, ending in `/v1`. For the Local engine, its loopback address. */
  baseUrl: z.string(),
  key: KeyStatus,
  /** The profile's spending caps in USD (null: none). Absent from an older main. (docs/workflows.md) */
  budget: z.object({ daily: z.number().nullable(), monthly: z.number().nullable() }).optional(),
});
export type Profile = z.infer<typeof Profile>;

export const ProfileList = z.object({ activeId: z.string().nullable(), profiles: z.array(Profile) });
export type ProfileList = z.infer<typeof ProfileList>;

const httpUrl = z
  .url({ protocol: /^https?$/, error: 'base URL must be an http(s) URL' })
  .trim()
  .max(2048);

export const ProfileId = z.object({ id: z.string().min(1).max(200) });

export const ProfileCreate = z.object({
  name: z.string().trim().min(1).max(100),
  baseUrl: httpUrl,
  /** Optional: the key can also be set later with profiles.setKey. */
  key: z.string().min(1).max(4096).optional(),
});
export const ProfileUpdate = z.object({
  id: z.string().min(1).max(200),
  name: z.string().trim().min(1).max(100).optional(),
  baseUrl: httpUrl.optional(),
});
export const ProfileSetKey = z.object({
  id: z.string().min(1).max(200),
  /** Write-only: no route ever returns it. */
  key: z.string().trim().min(1).max(4096),
});

const cap = z.number().positive().max(1_000_000).nullable();
/** Spending caps in USD; null removes one. A job that would pass a cap is held (docs/workflows.md). */
export const ProfileSetBudget = z.object({ id: z.string().min(1).max(200), daily: cap, monthly: cap });
export type ProfileSetBudget = z.infer<typeof ProfileSetBudget>;
