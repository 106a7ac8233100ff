-- The service database on PostgreSQL, version 15: the operator catalog (server/catalog/sync/store.ts;
-- docs/providers.md, "Syncing the catalog"). On one machine it is DATA/catalog.json; nodes on one
-- database share it here instead: `document` is the catalog a sync (or an operator) wrote,
-- `previous` the one before it, and every node reloads when `updated_at` (Unix ms) changes.
-- One row (id 1).

CREATE TABLE operator_catalog (
  id SMALLINT PRIMARY KEY CHECK (id = 1),
  document TEXT NOT NULL,
  previous TEXT,
  updated_at BIGINT NOT NULL
);
