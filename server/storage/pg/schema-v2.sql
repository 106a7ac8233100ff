-- The service database on PostgreSQL, version 2: what the service itself needs to run on it
-- (server/storage/sql, server/storage/media-list-postgres.ts). Never changes once released.

-- GET /media's listing in (created_at, seq) order: everyone's public items, and (with
-- media_user_created of version 1) an owner's own items, each read from an index in order.
CREATE INDEX media_created ON media(created_at, seq);
CREATE INDEX media_public_created ON media(created_at, seq) WHERE public = 1;

-- Prompt search is a case-insensitive substring match (LIKE on the lowered prompt, under the ICU
-- root collation so that every script's case folds whatever the database's locale). pg_trgm's GIN
-- index answers such a LIKE of three characters or more from the index. pg_trgm is a contrib
-- extension shipped with PostgreSQL (Debian's postgresql package has it) and trusted, so the
-- database's owner may create it; where it is missing, the same LIKE scans the visible rows, which
-- is correct, only slower, so the migration does not fail for it.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm') THEN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
    EXECUTE 'CREATE INDEX media_prompt_trgm ON media USING gin (lower(prompt COLLATE "und-x-icu") gin_trgm_ops)';
  ELSE
    RAISE NOTICE 'pg_trgm is not available: prompt search scans rows';
  END IF;
END
$$;

-- A delivery's insertion order, the tiebreak of GET /webhooks/deliveries (SQLite's rowid there).
ALTER TABLE webhook_deliveries ADD COLUMN rowid BIGINT GENERATED ALWAYS AS IDENTITY;
CREATE INDEX webhook_deliveries_key_order ON webhook_deliveries(key_id, created_at, rowid);
