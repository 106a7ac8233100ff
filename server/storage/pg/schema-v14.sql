-- The service database on PostgreSQL, version 14: a rotated-out webhook signing secret (version 13
-- on SQLite), kept sealed beside the new one until previous_webhook_secret_until (Unix ms;
-- server/webhooks/secrets.ts): deliveries carry a signature by each until then, so receivers switch
-- secrets without a delivery failing to verify.

ALTER TABLE api_keys ADD COLUMN previous_webhook_secret TEXT;
ALTER TABLE api_keys ADD COLUMN previous_webhook_secret_until BIGINT;
