-- The compression of `measurements` by a job of the project's own, which gives up on a chunk that
-- requests hold instead of queueing for it (docs/decisions/0119).
--
-- Every rewrite of a chunk needs ACCESS EXCLUSIVE, which waits for the documents that lock the chunk
-- (013, docs/decisions/0114); while it waits, every later document of that chunk queues behind it.
-- TimescaleDB's compression policy has no setting that bounds that wait, so its job is replaced by this
-- one: the same chunks (older than `compress_after`) and the same work (`compress_chunk` compresses a
-- chunk, or recompresses one that corrections made partial), each chunk in its own transaction under
-- the job's `lock_timeout`, the migrations' own (src/db/migrate.ts). A chunk whose lock is not free by
-- then is left for the job's next run. The job's config holds both settings: `alter_job` changes them.
do $do$
begin
  if not exists (select from pg_extension where extname = 'timescaledb') then
    return;
  end if;
  if not exists (select from timescaledb_information.hypertables where hypertable_name = 'measurements') then
    return;
  end if;

  create or replace procedure compress_measurements(job_id integer, config jsonb)
  language plpgsql as $$
  declare
    chunk regclass;
  begin
    for chunk in
      select show_chunks('measurements', older_than => (config ->> 'compress_after')::interval)
    loop
      -- Per transaction: it ends at the COMMIT, and never outlives a `call run_job` in its session.
      perform set_config('lock_timeout', config ->> 'lock_timeout', true);
      begin
        -- An already compressed chunk answers with a notice, before it locks anything.
        perform compress_chunk(chunk, if_not_compressed => true);
      exception when lock_not_available then
        raise warning 'chunk % is left for the next run: requests held it longer than lock_timeout', chunk;
      end;
      commit;
    end loop;
  end
  $$;

  if not exists (select from timescaledb_information.jobs where proc_name = 'compress_measurements') then
    -- Its first run a period from now: a run at once would compress old chunks
    -- under the feet of whatever the migrating process does next (an import, a test's fixture).
    perform add_job('compress_measurements', interval '12 hours',
                    config => '{"compress_after": "180 days", "lock_timeout": "1s"}',
                    initial_start => now() + interval '12 hours');
  end if;
  perform remove_compression_policy('measurements', if_exists => true);
end
$do$;
