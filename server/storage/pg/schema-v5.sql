-- The service database on PostgreSQL, version 5: GET /media's totals without a search from
-- counters, as on SQLite (db.ts, version 3: media_counts, media_public_counts), instead of a
-- count(*) that reads every visible row (tens of milliseconds at 100,000 items). Never changes
-- once released.
--
-- media_counts counts an owner's items per combination of filter values; media_public_counts the
-- public items of every owner. A total sums a few counters (server/storage/media-list-postgres.ts).
-- Triggers keep both in step with media in the writing transaction, so they are always exact;
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

-- Inserts and deletes are counted per statement (transition tables), one counter update per
-- combination: a multi-row INSERT of thousands of items (an import) updates each counter once,
-- rather than once per row, which in one transaction leaves each counter row a chain of versions
-- that every later update walks. Keys are taken in order so concurrent statements lock alike.
CREATE FUNCTION media_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO media_counts AS c (user_id, public, kind, size, model, model_version, provider_id, n)
    SELECT user_id, public, kind, size, model, model_version, provider_id, count(*) FROM new_rows
    GROUP BY user_id, public, kind, size, model, model_version, provider_id ORDER BY user_id, public, kind, size, model, model_version, provider_id
    ON CONFLICT (user_id, public, kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + excluded.n;
  INSERT INTO media_public_counts AS c (kind, size, model, model_version, provider_id, n)
    SELECT kind, size, model, model_version, provider_id, count(*) FROM new_rows WHERE public = 1
    GROUP BY kind, size, model, model_version, provider_id ORDER BY kind, size, model, model_version, provider_id
    ON CONFLICT (kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END
$$;

CREATE FUNCTION media_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE media_counts AS c SET n = c.n - d.n
    FROM (SELECT user_id, public, kind, size, model, model_version, provider_id, count(*) AS n FROM old_rows GROUP BY user_id, public, kind, size, model, model_version, provider_id ORDER BY user_id, public, kind, size, model, model_version, provider_id) AS d
    WHERE (c.user_id, c.public, c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.user_id, d.public, d.kind, d.size, d.model, d.model_version, d.provider_id);
  DELETE FROM media_counts AS c USING (SELECT DISTINCT user_id, public, kind, size, model, model_version, provider_id FROM old_rows) AS d
    WHERE (c.user_id, c.public, c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.user_id, d.public, d.kind, d.size, d.model, d.model_version, d.provider_id) AND c.n <= 0;
  UPDATE media_public_counts AS c SET n = c.n - d.n
    FROM (SELECT kind, size, model, model_version, provider_id, count(*) AS n FROM old_rows WHERE public = 1 GROUP BY kind, size, model, model_version, provider_id ORDER BY kind, size, model, model_version, provider_id) AS d
    WHERE (c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.kind, d.size, d.model, d.model_version, d.provider_id);
  DELETE FROM media_public_counts AS c USING (SELECT DISTINCT kind, size, model, model_version, provider_id FROM old_rows WHERE public = 1) AS d
    WHERE (c.kind, c.size, c.model, c.model_version, c.provider_id)
      = (d.kind, d.size, d.model, d.model_version, d.provider_id) AND c.n <= 0;
  RETURN NULL;
END
$$;

-- An update that changes what is counted (nothing in the service does today) moves its row
-- between counters, row by row: transition tables cannot be limited to these columns, and
-- every update of expires_at or downloaded_at would otherwise pass through the counters.
CREATE FUNCTION media_counts_moved() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE media_counts SET n = n - 1
    WHERE (user_id, public, kind, size, model, model_version, provider_id) = (OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id);
  DELETE FROM media_counts
    WHERE (user_id, public, kind, size, model, model_version, provider_id) = (OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id)
      AND n <= 0;
  IF OLD.public = 1 THEN
    UPDATE media_public_counts SET n = n - 1
      WHERE (kind, size, model, model_version, provider_id) = (OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id);
    DELETE FROM media_public_counts
      WHERE (kind, size, model, model_version, provider_id) = (OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id) AND n <= 0;
  END IF;
  INSERT INTO media_counts AS c (user_id, public, kind, size, model, model_version, provider_id, n)
    VALUES (NEW.user_id, NEW.public, NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id, 1)
    ON CONFLICT (user_id, public, kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1;
  IF NEW.public = 1 THEN
    INSERT INTO media_public_counts AS c (kind, size, model, model_version, provider_id, n)
      VALUES (NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id, 1)
      ON CONFLICT (kind, size, model, model_version, provider_id) DO UPDATE SET n = c.n + 1;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER media_counts_insert AFTER INSERT ON media
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION media_counts_inserted();
CREATE TRIGGER media_counts_delete AFTER DELETE ON media
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION media_counts_deleted();
CREATE TRIGGER media_counts_update AFTER UPDATE OF user_id, public, kind, size, model, model_version, provider_id ON media
  FOR EACH ROW
  WHEN ((OLD.user_id, OLD.public, OLD.kind, OLD.size, OLD.model, OLD.model_version, OLD.provider_id)
    IS DISTINCT FROM (NEW.user_id, NEW.public, NEW.kind, NEW.size, NEW.model, NEW.model_version, NEW.provider_id))
  EXECUTE FUNCTION media_counts_moved();

-- The rows already here.
INSERT INTO media_counts (user_id, public, kind, size, model, model_version, provider_id, n)
  SELECT user_id, public, kind, size, model, model_version, provider_id, count(*)
  FROM media GROUP BY user_id, public, kind, size, model, model_version, provider_id;
INSERT INTO media_public_counts (kind, size, model, model_version, provider_id, n)
  SELECT kind, size, model, model_version, provider_id, count(*)
  FROM media WHERE public = 1 GROUP BY kind, size, model, model_version, provider_id;
