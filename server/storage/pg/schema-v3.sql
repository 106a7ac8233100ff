-- The service database on PostgreSQL, version 3: rate windows counted in the database, one row per
-- account, incremented by one atomic upsert (server/limits/rate-limiter.ts), so that every node
-- counts the same windows and a restart loses nothing. The SQLite schema's version 7 is the same.

CREATE TABLE rate_counters (
  user_id TEXT PRIMARY KEY,
  minute_start BIGINT NOT NULL,
  minute_count INTEGER NOT NULL,
  hour_start BIGINT NOT NULL,
  hour_count INTEGER NOT NULL,
  day_start BIGINT NOT NULL,
  day_count INTEGER NOT NULL
);

INSERT INTO rate_counters (user_id, minute_start, minute_count, hour_start, hour_count, day_start, day_count)
SELECT user_id,
  coalesce(max(CASE WHEN "window" = 'minute' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'minute' THEN count END), 0),
  coalesce(max(CASE WHEN "window" = 'hour' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'hour' THEN count END), 0),
  coalesce(max(CASE WHEN "window" = 'day' THEN start END), 0), coalesce(max(CASE WHEN "window" = 'day' THEN count END), 0)
FROM rate_windows GROUP BY user_id;

DROP TABLE rate_windows;
