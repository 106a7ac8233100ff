-- The service database on PostgreSQL, version 12: which generations a synchronous request made.
-- Those are a row and a job of the generation queue too (server/media/sync-generation.ts), and
-- GET /v1/generations lists the asynchronous ones only, as on SQLite (version 11 there), where a
-- synchronous request stores no row.

ALTER TABLE generations ADD COLUMN synchronous INTEGER NOT NULL DEFAULT 0;
