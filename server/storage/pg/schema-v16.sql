-- The service database on PostgreSQL, version 16: each generation's plan (version 14 on SQLite),
-- the request validated and routed when it came in (GenerationPlan, shared/api), as JSON. A node
-- resuming or taking over the generation runs from it. Rows stored before keep NULL and are
-- planned again from `request`.

ALTER TABLE generations ADD COLUMN plan TEXT;
