-- Sync tokens (src/v1/sync/): what an import changed, kept with the transaction that changed it, so
-- that "what has been written since this snapshot" can be answered exactly from any earlier snapshot,
-- whatever order imports started and committed in.
--
-- One row per tube and run of instants an import wrote: every measurement of the tube in
-- [first_at, last_at] was inserted or given another value by transaction `xid` (the importers write
-- these rows in their own transaction: src/importers/measurements/changeLog.ts). The row becomes
-- visible exactly when the measurements do, at the commit. An import that changes nothing writes none.
--
-- Columns ordered for alignment: 8-byte ones first, the int4 last (no padding inside the tuple).
create table if not exists measurement_changes (
  xid xid8 not null default pg_current_xact_id(),
  first_at timestamptz not null,
  last_at timestamptz not null,
  -- Transaction start: what SYNC_HISTORY_DAYS prunes by.
  recorded_at timestamptz not null default now(),
  tube_id integer not null,
  check (first_at <= last_at)
);

-- A delta reads the rows of the transactions a token's snapshot did not see: all have xid >= its
-- xmin, so the scan starts there and reads only what was written since, not the whole history.
create index if not exists measurement_changes_xid on measurement_changes (xid);

-- One row: the key of the tokens' HMAC, and how far the history has been pruned.
-- The key is made here from gen_random_uuid() (pg_strong_random: 122 random bits each, 488 in all).
-- pruned_through: the largest xid whose change rows were deleted; a token whose snapshot's xmin is not
-- above it may have lost changes and is answered 410. '0' (no transaction): nothing pruned yet.
create table if not exists sync_state (
  only_row boolean primary key default true check (only_row),
  secret bytea not null check (length(secret) >= 32),
  pruned_through xid8 not null default '0'
);

insert into sync_state (secret)
select decode(replace(gen_random_uuid()::text || gen_random_uuid()::text || gen_random_uuid()::text ||
                      gen_random_uuid()::text, '-', ''), 'hex')
on conflict (only_row) do nothing;
