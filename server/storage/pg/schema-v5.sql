-- The service database on PostgreSQL, version 5: GET /media's totals without a search from
-- counters, as on SQLite (db.ts, version 3: media_counts, media_public_counts), instead of a
-- count(*) that reads every visible row (tens of milliseconds at 100,000 items). Never changes
-- once released.
--
-- media_counts counts an owner's items per combination of filter values; media_public_counts the
-- public items of every owner. A total sums a few counters (server/storage/media-list-postgres.ts).
-- Row triggers keep both in step with media in the writing transaction, so they are always exact;
-- two transactions adding items of one combination queue on its counter row until the first
-- commits, which an item's commit (a few statements) keeps short.

CREATE TABLE media_counts (
  user_id TEXT NOT NULL,
  public INTEGER NOT NULL,
  kind TEXT NOT NULL,
  size TEXT NOT NULL,
  model TEXT NOT NULL,
  model_version TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (user_id, public, kind, size, model, model_version, provider_id)
);
CREATE TABLE media_public_counts (
  kind TEXT NOT NULL,
  size TEXT NOT NULL,
  model TEXT NOT NULL,
  model_version TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  n BIGINT NOT NULL,
  PRIMARY KEY (kind, size, model, model_version, provider_id)
);

CREATE FUNCTION media_counts_add(r media) RETURNS void LANGUAGE sql AS $$
  INSERT INTO media_counts AS c (user_id, public, kind, size, model, model_version, provider_id, n)
    VALUES (r.user_id, r.public, r.kind, r.size, r.model, r.model_version, r.provider_id, 1)
    ON CONFLICT (user_id, public, kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1;
  INSERT INTO media_public_counts AS c (kind, size, model, model_version, provider_id, n)
    SELECT r.kind, r.size, r.model, r.model_version, r.provider_id, 1 WHERE r.public = 1
    ON CONFLICT (kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1;
$$;

CREATE FUNCTION media_counts_remove(r media) RETURNS void LANGUAGE sql AS $$
  UPDATE media_counts SET n = n - 1
    WHERE (user_id, public, kind, size, model, model_version, provider_id)
      = (r.user_id, r.public, r.kind, r.size, r.model, r.model_version, r.provider_id);
  DELETE FROM media_counts
    WHERE (user_id, public, kind, size, model, model_version, provider_id)
      = (r.user_id, r.public, r.kind, r.size, r.model, r.model_version, r.provider_id) AND n <= 0;
  UPDATE media_public_counts SET n = n - 1
    WHERE (kind, size, model, model_version, provider_id) = (r.kind, r.size, r.model, r.model_version, r.provider_id)
      AND r.public = 1;
  DELETE FROM media_public_counts
    WHERE (kind, size, model, model_version, provider_id) = (r.kind, r.size, r.model, r.model_version, r.provider_id)
      AND r.public = 1 AND n <= 0;
$$;

CREATE FUNCTION media_counts_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM media_counts_remove(OLD); END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM media_counts_add(NEW); END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER media_counts_insert AFTER INSERT ON media
  FOR EACH ROW EXECUTE FUNCTION media_counts_trigger();
CREATE TRIGGER media_counts_delete AFTER DELETE ON media
  FOR EACH ROW EXECUTE FUNCTION media_counts_trigger();
-- Only a change of what is counted moves a row between counters (not expires_at, downloaded_at).
CREATE TRIGGER media_counts_update AFTER UPDATE OF user_id, public, kind, size, model, model_version, provider_id ON media
  FOR EACH ROW
  WHEN ((OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id)
    IS DISTINCT FROM (NEW.user_id, NEW.public, NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id))
  EXECUTE FUNCTION media_counts_trigger();

-- The rows already here.
INSERT INTO media_counts (user_id, public, kind, size, model, model_version, provider_id, n)
  SELECT user_id, public, kind, size, model, model_version, provider_id, count(*)
  FROM media GROUP BY user_id, public, kind, size, model, model_version, provider_id;
INSERT INTO media_public_counts (kind, size, model, model_version, provider_id, n)
  SELECT kind, size, model, model_version, provider_id, count(*)
  FROM media WHERE public = 1 GROUP BY kind, size, model, model_version, provider_id;
