-- The service database on PostgreSQL, version 4: concurrent generations held as leased rows
-- (server/limits/concurrency.ts), so the limits hold across nodes; the SQLite schema's version 8.

CREATE TABLE running_slots (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  node TEXT NOT NULL,
  lease_until BIGINT NOT NULL
);
CREATE INDEX running_slots_user ON running_slots(user_id, kind);
CREATE INDEX running_slots_node ON running_slots(node);
