-- gwapi:no-transaction
-- The days whose rollups have no mean, which an aggregate of whole days computes from measurements
-- (src/engine/read/dayRollups.ts, unsummedDays): looked up before every daily select, and nearly always
-- none. Without this index the lookup reads every rollup of the interval's tubes; with it, an entry
-- per such day, so a network's year costs what one tube's does.
--
-- Built concurrently, outside a transaction: a plain CREATE INDEX would block every import's rollups
-- for the whole build. measurement_day_rollups is a plain table, also under TimescaleDB.
create index concurrently if not exists measurement_day_rollups_unsummed
  on measurement_day_rollups (tube_id, day) where statuses = present and mean is null;
