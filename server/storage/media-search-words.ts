import type { Sql } from './sql/types.ts';

/**
 * Which words of a search PostgreSQL's trigram index should look for (media-list-postgres.ts).
 *
 * PostgreSQL 15's GIN index answers `LIKE '%number 47114%'` by intersecting the posting lists of
 * every trigram in the pattern, and a trigram that most prompts have ("num", "umb", "ber") has a
 * posting tree of ~40 pages that the intersection reads whole, for every candidate the rare
 * trigrams left: 3 ms for that search among 100,000 prompts, against 0.1 ms for `'%47114%'`
 * alone. So when a search has words that most prompts contain and words that few do, the index
 * looks for the rare words only and every row it finds is checked against the whole search
 * (strpos, which the index cannot use): the same rows, without reading the common words' lists.
 *
 * How common a word is comes from the planner's own statistics of the indexed expression (the
 * histogram and most common values ANALYZE, or autovacuum, keeps for media_prompt_trgm's
 * `lower(prompt)`): a sample of about a hundred prompts, read once per node every few minutes.
 * Without statistics (a fresh or small table, a role that may not read them) every search looks
 * for the whole pattern, as before.
 */

/** A word in more than this share of prompts is left to the recheck (when rarer words remain). */
export const COMMON_SHARE = 0.1;

/** How long a node trusts the sample it read. */
const SAMPLE_MS = 5 * 60_000;

/** The statistics' sample of lowered prompts: each with the share of rows it stands for. */
export interface PromptSample {
  prompts: Array<{ text: string; share: number }>;
}

const EMPTY: PromptSample = { prompts: [] };

/**
 * The words of `search` (split at whitespace, three characters or more: a trigram index cannot
 * look for fewer) that the index should look for, or null to look for the whole search: no
 * sample, one word, or no word common enough that leaving it out would spare anything. Words are
 * whole substrings of the search, so every row the whole search matches has each of them; and a
 * word boundary is whitespace, so lowering a word alone gives what it is in the lowered search
 * (case mappings that depend on context, like a final sigma, stop at whitespace).
 */
export function wordsToIndex(search: string, sample: PromptSample): string[] | null {
  if (sample.prompts.length === 0) return null;
  const words = [...new Set(search.split(/\s+/u).filter((w) => [...w].length >= 3))];
  if (words.length < 2) return null;
  const share = (word: string) => {
    const lowered = word.toLowerCase();
    let found = 0;
    for (const p of sample.prompts) if (p.text.includes(lowered)) found += p.share;
    return found;
  };
  const rare = words.filter((w) => share(w) <= COMMON_SHARE);
  return rare.length > 0 && rare.length < words.length ? rare : null;
}

const samples = new WeakMap<Sql, { sample: PromptSample; at: number; reading?: Promise<void> }>();

/**
 * The node's sample for `db`: read on the first search (awaited, one statement), then read again
 * in the background once it is SAMPLE_MS old, the old one serving meanwhile.
 */
export async function promptSample(db: Sql, now = Date.now()): Promise<PromptSample> {
  let held = samples.get(db);
  if (held === undefined) {
    held = { sample: EMPTY, at: now };
    samples.set(db, held);
    const first = read(db, held, now);
    held.reading = first;
    await first;
    return held.sample;
  }
  if (held.reading === undefined && now - held.at > SAMPLE_MS) {
    held.reading = read(db, held, now);
  }
  return held.sample;
}

async function read(db: Sql, held: { sample: PromptSample; at: number; reading?: Promise<void> }, now: number) {
  try {
    held.sample = await readSample(db);
  } catch {
    // Statistics are an optimisation: without them every search looks for its whole pattern.
    held.sample = EMPTY;
  } finally {
    held.at = now;
    held.reading = undefined;
  }
}

/** The planner's statistics of media_prompt_trgm's expression, as a weighted sample. */
async function readSample(db: Sql): Promise<PromptSample> {
  const row = await db.get<{ hist: string[] | null; mcv: string[] | null; freqs: number[] | null; nulls: number }>(
    `SELECT histogram_bounds::text::text[] AS hist, most_common_vals::text::text[] AS mcv,
            most_common_freqs AS freqs, null_frac AS nulls
     FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'media_prompt_trgm'`,
  );
  if (!row) return EMPTY;
  const mcv = row.mcv ?? [];
  const freqs = row.freqs ?? [];
  const prompts = mcv.map((text, i) => ({ text, share: Number(freqs[i] ?? 0) }));
  const hist = row.hist ?? [];
  // The histogram's bounds stand, evenly, for the rows the most common values and nulls leave.
  const rest = Math.max(0, 1 - prompts.reduce((sum, p) => sum + p.share, 0) - Number(row.nulls));
  for (const text of hist) prompts.push({ text, share: rest / hist.length });
  return { prompts };
}
