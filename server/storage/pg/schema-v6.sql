-- The service database on PostgreSQL, version 6: generations run through the work queue (docs/service.md,
-- server/media/generation-queue.ts). Never changes once released.
--
-- lease_owner is the queue attempt (pg-boss job id and retry count) that runs the generation now.
-- A node taking a generation over writes its own; the commit of the items and their charge locks
-- the row (FOR UPDATE) and refuses when it is final or another attempt's, so a node that was only
-- slow when its lease lapsed does not charge a second time. The queue's own tables live in the
-- schema `pgboss`, which pg-boss installs and migrates (clipdesk-service migrate runs it).
ALTER TABLE generations ADD COLUMN lease_owner TEXT;
