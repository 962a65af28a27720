-- Where this server stands in its WAL history (src/db/walHistory.ts). A restore to a point in time,
-- and a promotion, start a new timeline; sync tokens and validators carry the timeline they were read on,
-- so that none from a history this database no longer holds is taken for one of its own.
--
-- SECURITY DEFINER: a standby's received timeline (pg_stat_wal_receiver) and the history files in
-- pg_wal are readable only by a superuser (or pg_read_all_stats and pg_read_server_files), which the
-- service's role need not be. Made by `gwapi migrate`; when its role holds neither, the functions still
-- answer, with less (their comments say what), and the service is coarser but never wrong.

-- The system identifier, the timeline and the LSN of the server's place now: on a primary its WAL
-- insert position (every commit a snapshot taken before sees lies below it); on a standby its replay
-- position, and the timeline it receives (the one replay is on, or the next, fetched ahead of replay).
create function wal_place(out system text, out timeline integer, out lsn pg_lsn)
  language plpgsql stable security definer set search_path = pg_catalog
as $$
begin
  select c.system_identifier::text into system from pg_control_system() c;
  if pg_is_in_recovery() then
    lsn := pg_last_wal_replay_lsn();
    -- Without a walreceiver (or the right to see it) the last restartpoint's timeline: behind at most.
    select coalesce((select r.received_tli from pg_stat_wal_receiver r), c.timeline_id)
      into timeline from pg_control_checkpoint() c;
  else
    lsn := pg_current_wal_insert_lsn();
    timeline := ('x' || substr(pg_walfile_name(lsn), 1, 8))::bit(32)::integer;
  end if;
exception when others then
  -- A server without WAL functions (an embedded single-user one): one timeline, no place in it.
  timeline := coalesce(timeline, 1);
  lsn := coalesce(lsn, '0/0');
end $$;

-- The history file of `tli` (its lines: parent timeline, the LSN where it ended, a reason) and when
-- this server wrote or received it; null when there is none (timeline 1) or it may not be read.
create function wal_timeline_history(tli integer, out history text, out written_at timestamptz)
  language plpgsql stable security definer set search_path = pg_catalog
as $$
declare
  file text := 'pg_wal/' || lpad(upper(to_hex(tli)), 8, '0') || '.history';
begin
  history := pg_read_file(file, 0, 1048576, true);
  written_at := (pg_stat_file(file, true)).modification;
exception when insufficient_privilege then
  history := null;
end $$;
