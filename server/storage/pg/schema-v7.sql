-- The service database on PostgreSQL, version 7: what GET /media needs to remember a listing's
-- search total and page anchors between requests, on any number of nodes, and never serve them
-- stale (server/storage/media-list-postgres.ts). Never changes once released.
--
-- Every counter row of version 5 also counts its changes: `changes` grows by one for each item
-- that enters or leaves the row's combination, or whose prompt changes while in it, and never
-- goes down. A listing's items all lie in a known set of counter rows (its owner's or the public
-- ones, narrowed by its filters), so the sum of their `changes` read in the same snapshot as a
-- total or a page is a version of that listing: any write that could change what the listing
-- holds raises it. Each node keeps what it learnt per listing and version; another node's write
-- shows up as a new version on the next read. The writers already lock these rows (version 5),
-- so this adds no contention. Counter rows are no longer deleted at zero, since a deleted row
-- would take its changes with it and a version could then repeat; there are at most as many as
-- combinations of filter values ever seen.

ALTER TABLE media_counts ADD COLUMN changes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE media_public_counts ADD COLUMN changes BIGINT NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION media_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO media_counts AS c (user_id, public, kind, size, model, model_version, provider_id, n, changes)
    SELECT user_id, public, kind, size, model, model_version, provider_id, count(*), count(*) FROM new_rows
    GROUP BY user_id, public, kind, size, model, model_version, provider_id ORDER BY user_id, public, kind, size, model, model_version, provider_id
    ON CONFLICT (user_id, public, kind, size, model, model_version, provider_id)
    DO UPDATE SET n = c.n + excluded.n, changes = c.changes + excluded.changes;
  INSERT INTO media_public_counts AS c (kind, size, model, model_version, provider_id, n, changes)
    SELECT kind, size, model, model_version, provider_id, count(*), count(*) FROM new_rows WHERE public = 1
    GROUP BY kind, size, model, model_version, provider_id ORDER BY kind, size, model, model_version, provider_id
    ON CONFLICT (kind, size, model, model_version, provider_id)
    DO UPDATE SET n = c.n + excluded.n, changes = c.changes + excluded.changes;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION media_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE media_counts AS c SET n = c.n - d.n, changes = c.changes + d.n
    FROM (SELECT user_id, public, kind, size, model, model_version, provider_id, count(*) AS n FROM old_rows GROUP BY user_id, public, kind, size, model, model_version, provider_id ORDER BY user_id, public, kind, size, model, model_version, provider_id) AS d
    WHERE (c.user_id, c.public, c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.user_id, d.public, d.kind, d.size, d.model, d.model_version, d.provider_id);
  UPDATE media_public_counts AS c SET n = c.n - d.n, changes = c.changes + d.n
    FROM (SELECT kind, size, model, model_version, provider_id, count(*) AS n FROM old_rows WHERE public = 1 GROUP BY kind, size, model, model_version, provider_id ORDER BY kind, size, model, model_version, provider_id) AS d
    WHERE (c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.kind, d.size, d.model, d.model_version, d.provider_id);
  RETURN NULL;
END
$$;

-- An update that changes what is counted or what a search finds leaves its old combination and
-- enters its new one (the same one when only the prompt changed): both count a change.
CREATE OR REPLACE FUNCTION media_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE media_counts SET n = n - 1, changes = changes + 1
    WHERE (user_id, public, kind, size, model, model_version, provider_id) = (OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id);
  IF OLD.public = 1 THEN
    UPDATE media_public_counts SET n = n - 1, changes = changes + 1
      WHERE (kind, size, model, model_version, provider_id) = (OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id);
  END IF;
  INSERT INTO media_counts AS c (user_id, public, kind, size, model, model_version, provider_id, n, changes)
    VALUES (NEW.user_id, NEW.public, NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id, 1, 1)
    ON CONFLICT (user_id, public, kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1, changes = c.changes + 1;
  IF NEW.public = 1 THEN
    INSERT INTO media_public_counts AS c (kind, size, model, model_version, provider_id, n, changes)
      VALUES (NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id, 1, 1)
      ON CONFLICT (kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1, changes = c.changes + 1;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER media_counts_update ON media;
CREATE TRIGGER media_counts_update AFTER UPDATE OF user_id, public, kind, size, model, model_version, provider_id, prompt ON media
  FOR EACH ROW
  WHEN ((OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id, OLD.prompt)
    IS DISTINCT FROM (NEW.user_id, NEW.public, NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id, NEW.prompt))
  EXECUTE FUNCTION media_counts_moved();

-- Searches of one or two characters, which have no trigram (pg_trgm's index of version 2 cannot
-- answer them): a GIN index over every distinct character and pair of characters of the lowered
-- prompt, as SQLite's media_grams (db.ts, version 3). The search's own lowered text is then one
-- element of that array when it is at most two characters long (lowering may lengthen a string:
-- 'İ' becomes two), so containment finds exactly the prompts LIKE finds; LIKE stays the predicate.
CREATE FUNCTION media_prompt_grams(prompt TEXT) RETURNS TEXT[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT g), '{}') FROM (
    SELECT substr(prompt, i, 1) AS g FROM generate_series(1, length(prompt)) AS i
    UNION ALL SELECT substr(prompt, i, 2) FROM generate_series(1, length(prompt) - 1) AS i) AS grams
$$;
CREATE INDEX media_prompt_grams ON media USING gin (media_prompt_grams(lower(prompt COLLATE "und-x-icu")));
