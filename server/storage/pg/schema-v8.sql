-- The service database on PostgreSQL, version 8: storage reserved by running generations, held as
-- leased rows (server/limits/storage-quota.ts), and named leases for work one node at a time does
-- (server/storage/leases.ts: the retention sweep); the SQLite schema's version 9.

CREATE TABLE storage_reservations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  node TEXT NOT NULL,
  lease_until BIGINT NOT NULL
);
CREATE INDEX storage_reservations_user ON storage_reservations(user_id);
CREATE INDEX storage_reservations_node ON storage_reservations(node);

CREATE TABLE leases (
  name TEXT PRIMARY KEY,
  node TEXT NOT NULL,
  lease_until BIGINT NOT NULL
);
