-- The service database on PostgreSQL, version 13: the key of an upload's received bytes (version 12
-- on SQLite). Every PUT stores its body under a key of its own (server/storage/layout.ts,
-- uploadPutKey), and marking the upload received records the key of the one kept, so two PUTs whose
-- bodies both reach the store never replace each other's. Rows received before keep NULL: their
-- bytes are where every PUT stored them then, uploads/<id>/data.

ALTER TABLE uploads ADD COLUMN received_key TEXT;
