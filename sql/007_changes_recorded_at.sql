-- gwapi:no-transaction
-- pruneChangeLog (src/importers/measurements/changeLog.ts) deletes the change history older than
-- SYNC_HISTORY_DAYS after every import; without an index that is a scan of the whole log each time.
--
-- A btree, not a BRIN: rows are appended in recorded_at order, but pruning frees the oldest pages and
-- later rows are written into them, and a BRIN range once widened is never narrowed again, so the
-- prune reads more of the table with every day of churn (bench/changeLogIndex.ts, bench/README.md).
--
-- Built concurrently, outside a transaction: a plain CREATE INDEX would block every import's insert
-- into the log for the whole build. measurement_changes is a plain table, also under TimescaleDB.
create index concurrently if not exists measurement_changes_recorded_at
  on measurement_changes (recorded_at);
