-- TimescaleDB rewrites chunks for every session of this database (its compression policy's job, or a
-- `compress_chunk` by hand) only in ways a document's snapshot survives (docs/decisions/0114).
--
-- A document locks the chunks before it takes its snapshot (src/engine/document.ts). Compressing a
-- chunk empties it by TRUNCATE, under ACCESS EXCLUSIVE, so it waits for every document that holds
-- the chunk. Recompressing a chunk after a correction, segment by segment (the default), takes no lock
-- a reader holds off, and marks the chunk fully compressed: a snapshot taken before then reads only the
-- new batches, which it cannot see, and misses the corrected segments' rows. Off, the chunk is
-- decompressed and compressed again, under ACCESS EXCLUSIVE like a first compression.
-- `truncate_only` (the default) is kept: the others fall back to DELETE when a reader holds the chunk,
-- and the chunk is then marked compressed with its rows out of a running snapshot's reach.
-- Per database: every new session of it, the policy's background job's included, starts with these.
-- ALTER DATABASE needs the database's owner (or a superuser), as `gwapi migrate` runs.
do $$
declare
  setting text;
begin
  if not exists (select from pg_extension where extname = 'timescaledb') then
    return;
  end if;
  foreach setting in array array[
    'timescaledb.enable_segmentwise_recompression = off',
    'timescaledb.compress_truncate_behaviour = truncate_only'
  ] loop
    begin
      execute format('alter database %I set %s', current_database(), setting);
    exception when undefined_object then
      -- A TimescaleDB without the setting (older than 2.28, the one tried): said, not failed.
      raise notice 'TimescaleDB has no setting %: see docs/decisions/0114', setting;
    end;
  end loop;
end
$$;
