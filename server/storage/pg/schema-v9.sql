-- The service database on PostgreSQL, version 9: each remote provider's health, shared by the
-- nodes (server/providers/remote/health.ts). A refused key or repeated failures seen by one node
-- put the provider in a cooldown that every node's routing respects; failures seen by several
-- nodes add up. PostgreSQL only: on SQLite the one node keeps it in memory. Times in ms.

CREATE TABLE provider_health (
  provider TEXT PRIMARY KEY,
  -- Failures in a row (a success deletes the row).
  failures INTEGER NOT NULL,
  since BIGINT NOT NULL,
  last_class TEXT NOT NULL,
  -- The provider's error message with every configured key redacted: never a key.
  last_message TEXT NOT NULL,
  last_at BIGINT NOT NULL,
  cooldown_until BIGINT
);
