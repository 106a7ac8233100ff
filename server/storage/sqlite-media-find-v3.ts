/**
 * Version 3 of the SQLite schema (sqlite-migrations.ts): the media listing's order key, find
 * indexes and counters, and the triggers that keep them in step with \`media\`. Its own module
 * because its triggers are built from two helpers; like every migration, it never changes.
 */

/**
 * How `GET /media` finds and counts without walking rows (version 3). Measured on 100,000 items,
 * the listing spent its time evaluating `user_id = ? OR public = 1` and the filters row by row,
 * counting every match for `total`, and stepping over OFFSET rows one by one.
 *
 * - `ord` is the listing's order as one integer: created_at × 1024 plus the item's rank among
 *   items created in the same millisecond (in insertion order), so (created_at, seq) order is
 *   ord order. It stays below 2^53, so it reads back as a JavaScript number.
 * - `media_find` is a contentless FTS5 index whose rowid is `ord`: it answers search, visibility
 *   and the filters in one MATCH, in listing order, so a page reads only its own rows. The
 *   trigram `prompt` column gives substring search of three characters or more. The other
 *   columns each hold one trigram: a token standing for a value (media_terms), so a filter on
 *   them is exact, never a substring match.
 * - `media_grams` is the same for one- and two-character searches, which a trigram index cannot
 *   find: `grams` holds each distinct character of the prompt padded with two U+FFFF, and each
 *   distinct pair padded with one, so such a search is one token. Windows that straddle two grams
 *   start with U+FFFF or have it in the middle, so they never equal such a token. Single tokens
 *   need no positions (detail = none), which keeps this index a fraction of media_find's size.
 * - `media_counts` (per owner) and `media_public_counts` (public items of every owner) count
 *   items per combination of filter values, so `total` without a search sums a few counters.
 * Triggers keep all of this in step with `media` in the same transaction, so it is always exact
 * (created_at, which ord derives from, never changes once a row is written).
 */
export const MEDIA_FIND_V3 = `
DROP TRIGGER IF EXISTS media_fts_insert;
DROP TRIGGER IF EXISTS media_fts_delete;
DROP TABLE IF EXISTS media_fts;
DROP INDEX IF EXISTS media_listing;
DROP INDEX IF EXISTS media_public_created;

ALTER TABLE media ADD COLUMN ord INTEGER;
CREATE UNIQUE INDEX media_ord ON media(ord);

-- One token per (field, value): three private-use characters spelling the id in base 6,400.
CREATE TABLE media_terms (
  id INTEGER PRIMARY KEY,
  field TEXT NOT NULL,
  value TEXT NOT NULL,
  token TEXT GENERATED ALWAYS AS (char(57344 + (id / 40960000) % 6400, 57344 + (id / 6400) % 6400, 57344 + id % 6400)) VIRTUAL,
  UNIQUE (field, value)
);
CREATE VIRTUAL TABLE media_find USING fts5(
  prompt, vis, owner, kind, size, model, version, provider,
  content = '', contentless_delete = 1, tokenize = 'trigram'
);
CREATE VIRTUAL TABLE media_grams USING fts5(
  grams, vis, owner, kind, size, model, version, provider,
  content = '', contentless_delete = 1, tokenize = 'trigram', detail = none
);
-- Character positions for building grams inside a trigger (which cannot use a recursive WITH):
-- prompts are at most 1,000 characters (CONTENT_LIMITS); this covers ten times that.
CREATE TABLE media_positions (n INTEGER PRIMARY KEY);
INSERT INTO media_positions (n) WITH RECURSIVE p(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM p WHERE n < 10000) SELECT n FROM p;
CREATE TABLE media_counts (
  user_id TEXT NOT NULL, public INTEGER NOT NULL, kind TEXT NOT NULL, size TEXT NOT NULL, model TEXT NOT NULL,
  model_version TEXT NOT NULL, provider_id TEXT NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (user_id, public, kind, size, model, model_version, provider_id)
) WITHOUT ROWID;
CREATE TABLE media_public_counts (
  kind TEXT NOT NULL, size TEXT NOT NULL, model TEXT NOT NULL, model_version TEXT NOT NULL, provider_id TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (kind, size, model, model_version, provider_id)
) WITHOUT ROWID;
-- Bumped on every change to media's listed rows: cached search totals are valid for one version.
CREATE TABLE media_version (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL);
INSERT INTO media_version (id, version) VALUES (1, 0);

CREATE TRIGGER media_ord_insert AFTER INSERT ON media WHEN new.ord IS NULL BEGIN
  SELECT RAISE(ABORT, 'more than 1024 media items created in one millisecond')
    WHERE (SELECT max(ord) FROM media WHERE ord BETWEEN new.created_at * 1024 AND new.created_at * 1024 + 1023) = new.created_at * 1024 + 1023;
  UPDATE media SET ord = coalesce(
      (SELECT max(ord) + 1 FROM media WHERE ord BETWEEN new.created_at * 1024 AND new.created_at * 1024 + 1023),
      new.created_at * 1024)
    WHERE seq = new.seq;
END;
CREATE TRIGGER media_find_insert AFTER UPDATE OF ord ON media WHEN old.ord IS NULL BEGIN
${indexRow('new')}
END;
CREATE TRIGGER media_find_update AFTER UPDATE OF user_id, public, kind, size, model, model_version, provider_id, prompt ON media
WHEN old.ord IS NOT NULL BEGIN
${unindexRow('old')}
${indexRow('new')}
END;
CREATE TRIGGER media_find_delete AFTER DELETE ON media WHEN old.ord IS NOT NULL BEGIN
${unindexRow('old')}
END;

-- The rows already here: setting their ord indexes them (media_find_insert).
UPDATE media SET ord = ranked.ord
  FROM (SELECT seq, created_at * 1024 + row_number() OVER (PARTITION BY created_at ORDER BY seq) - 1 AS ord FROM media) AS ranked
  WHERE ranked.seq = media.seq;
`;

// indexRow and unindexRow are part of version 3 and never change: a later need is a new version
// that drops and recreates the triggers.

/** Trigger body: adds row `r` to media_find, media_grams and the counters. */
function indexRow(r: 'new'): string {
  const term = (field: string, value: string) =>
    `(SELECT token FROM media_terms WHERE field = '${field}' AND value = ${value})`;
  const tags = `CASE WHEN ${r}.public = 1 THEN ${term('vis', "'public'")} ELSE '' END,
    ${term('owner', `${r}.user_id`)}, ${term('kind', `${r}.kind`)}, ${term('size', `${r}.size`)},
    ${term('model', `${r}.model`)}, ${term('version', `${r}.model || ':' || ${r}.model_version`)},
    ${term('provider', `${r}.provider_id`)}`;
  return `
  INSERT OR IGNORE INTO media_terms (field, value) VALUES
    ('vis', 'public'), ('owner', ${r}.user_id), ('kind', ${r}.kind), ('size', ${r}.size), ('model', ${r}.model),
    ('version', ${r}.model || ':' || ${r}.model_version), ('provider', ${r}.provider_id);
  INSERT INTO media_find (rowid, prompt, vis, owner, kind, size, model, version, provider) VALUES (
    ${r}.ord, ${r}.prompt, ${tags});
  INSERT INTO media_grams (rowid, grams, vis, owner, kind, size, model, version, provider) VALUES (
    ${r}.ord,
    coalesce((SELECT group_concat(gram, '') FROM (
      SELECT substr(${r}.prompt, n, 1) || char(65535, 65535) AS gram FROM media_positions WHERE n <= length(${r}.prompt)
      UNION SELECT substr(${r}.prompt, n, 2) || char(65535) FROM media_positions WHERE n < length(${r}.prompt))), ''),
    ${tags});
  INSERT INTO media_counts (user_id, public, kind, size, model, model_version, provider_id, n)
    VALUES (${r}.user_id, ${r}.public, ${r}.kind, ${r}.size, ${r}.model, ${r}.model_version, ${r}.provider_id, 1)
    ON CONFLICT DO UPDATE SET n = n + 1;
  INSERT INTO media_public_counts (kind, size, model, model_version, provider_id, n)
    SELECT ${r}.kind, ${r}.size, ${r}.model, ${r}.model_version, ${r}.provider_id, 1 WHERE ${r}.public = 1
    ON CONFLICT DO UPDATE SET n = n + 1;
  UPDATE media_version SET version = version + 1;`;
}

/** Trigger body: removes row `r` from media_find, media_grams and the counters. */
function unindexRow(r: 'old'): string {
  const key = `user_id = ${r}.user_id AND public = ${r}.public AND kind = ${r}.kind AND size = ${r}.size AND model = ${r}.model
    AND model_version = ${r}.model_version AND provider_id = ${r}.provider_id`;
  const publicKey = `kind = ${r}.kind AND size = ${r}.size AND model = ${r}.model AND model_version = ${r}.model_version
    AND provider_id = ${r}.provider_id AND ${r}.public = 1`;
  return `
  DELETE FROM media_find WHERE rowid = ${r}.ord;
  DELETE FROM media_grams WHERE rowid = ${r}.ord;
  UPDATE media_counts SET n = n - 1 WHERE ${key};
  DELETE FROM media_counts WHERE ${key} AND n <= 0;
  UPDATE media_public_counts SET n = n - 1 WHERE ${publicKey};
  DELETE FROM media_public_counts WHERE ${publicKey} AND n <= 0;
  UPDATE media_version SET version = version + 1;`;
}
