-- The service database on PostgreSQL, version 10: finished generations found by when they ended,
-- so that retention (server/retention/sweeper.ts, once a minute on one node) removes those past
-- their keep without reading every generation of the last days. Partial: open ones are not in it.

CREATE INDEX generations_finished ON generations(updated_at) WHERE status IN ('succeeded', 'failed', 'canceled');
