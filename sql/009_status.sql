-- gwapi:no-transaction
-- gwapi:replaces 8a6b80cb7b0da1df76be076ddc29070edf63f91d603fa9715041a4254d639025
-- The status of each measurement, the corrections that sync deltas report, and the latest measurement
-- of each tube and status.
--
-- Online: statement by statement, outside a transaction, while the release before serves and imports,
-- so that no lock beyond a reader's is held longer than an instant (docs/operations/upgrade.md). It
-- replaces 1.3.1's text, which did the same in one transaction and built the primary key again under
-- ACCESS EXCLUSIVE, also on a filled table; what that text added besides is 010's (decision 0116).

-- 0 approved, 1 provisional, 2 rejected (src/engine/schemas.ts, STATUSES): a small code the formats
-- write as it is (Arrow's dictionary index). Rows stored before carry the default, provisional: a
-- constant default rewrites no row, and TimescaleDB takes it on compressed chunks too.
alter table measurements add column if not exists status int2 not null default 1;

-- The check of the status, and a primary key that carries status beside value, so that a series with
-- its status, or filtered by it, is still answered from the index alone. On an empty table (a new
-- install) both are made here, in an instant. On a filled one the check is added NOT VALID, in an
-- instant (every row written from then on is checked; the rows stored before hold the default alone),
-- and the key stays (tube_id, observed_at) include (value): built again it would hold ACCESS EXCLUSIVE
-- for the whole build on a hypertable, whose indexes TimescaleDB builds neither concurrently nor, when
-- unique, chunk by chunk, and on plain PostgreSQL a concurrent build would hold every VACUUM of the
-- release before's imports. A row's status is then read from the table; upgrade.md gives the key's
-- rebuild as a step of its own.
do $$
begin
  if exists (select from pg_constraint where conrelid = 'measurements'::regclass and conname = 'measurements_status') then
    return;
  end if;
  if exists (select from measurements) then
    alter table measurements add constraint measurements_status check (status between 0 and 2) not valid;
  else
    alter table measurements
      add constraint measurements_status check (status between 0 and 2),
      drop constraint measurements_pkey,
      add primary key (tube_id, observed_at) include (value, status);
  end if;
end
$$;

-- The order in which writers of a tube committed: each writer locks its tubes first (changeLog.ts) and
-- takes one number after that, for every change row it writes, so of two writers of the same tube the
-- later to commit has the larger number (xids are taken earlier and do not tell).
create sequence if not exists measurement_change_order;

create or replace function measurement_change_order() returns bigint language plpgsql as $$
declare
  taken text := current_setting('gwapi.change_order', true);
begin
  if taken is null or taken = '' then
    taken := nextval('measurement_change_order')::text;
    perform set_config('gwapi.change_order', taken, true);
  end if;
  return taken::bigint;
end
$$;

-- From here on a delta reads from measurement_changes the runs of inserted rows only: corrections are
-- listed below (010 marks the runs of corrected rows that imports list besides, for the release before).
-- Rows written before carry no order: their runs may hold changed rows too (src/sync/sql.ts). The column
-- is added without its default, which would be computed for every row stored before, rewriting the log
-- under ACCESS EXCLUSIVE; the default then applies to the rows written from here on.
alter table measurement_changes add column if not exists change_order bigint;
alter table measurement_changes alter column change_order set default measurement_change_order();

-- Corrections: each measurement a transaction gave another value or status, or removed, with its
-- version before and after (after: null for a removal). A delta reads the current version of a corrected
-- measurement from here rather than searching the table for it, and tells from the version before what
-- a token's snapshot held, and so which measurements left the client's view. Inserted rows are not
-- listed: their runs in measurement_changes tell them.
create table if not exists measurement_corrections (
  xid xid8 not null default pg_current_xact_id(),
  change_order bigint not null default measurement_change_order(),
  observed_at timestamptz not null,
  value_before double precision not null,
  value_after double precision,
  recorded_at timestamptz not null default now(),
  tube_id integer not null,
  status_before int2 not null,
  status_after int2,
  check ((value_after is null) = (status_after is null))
);

create index if not exists measurement_corrections_xid on measurement_corrections (xid);
create index if not exists measurement_corrections_recorded_at on measurement_corrections (recorded_at);

-- The latest measurement of each tube and status, kept by every writer in its transaction
-- (refresh_latest_measurements), so that `latest` reads one small row per tube rather than searching
-- each series backwards, which on compressed chunks means decompressing them.
create table if not exists latest_measurements (
  tube_id integer not null,
  status int2 not null,
  observed_at timestamptz not null,
  value double precision not null,
  primary key (tube_id, status)
);

insert into latest_measurements (tube_id, status, observed_at, value)
select t.id, 1, m.observed_at, m.value
from tubes t
cross join lateral (
  select observed_at, value from measurements where tube_id = t.id order by observed_at desc limit 1
) m
on conflict (tube_id, status) do nothing;

-- Brings latest_measurements up to date with what the current transaction wrote (its change rows and
-- corrections), tube by tube over the span of instants it wrote. One pass over the span finds each
-- status's latest row in it. Per status: an entry after the span stands; one before it can only have
-- moved into the span; one inside it may also have left (a correction), so when the span now holds none
-- of that status, what lies before the span is searched.
create or replace function refresh_latest_measurements() returns void language plpgsql as $$
declare
  span record;
  s int2;
  known timestamptz;
  in_span timestamptz[];
  latest record;
begin
  for span in
    select tube_id, min(first_at) as first_at, max(last_at) as last_at
    from (select tube_id, first_at, last_at from measurement_changes where xid = pg_current_xact_id()
          union all
          select tube_id, observed_at, observed_at from measurement_corrections
          where xid = pg_current_xact_id()) written
    group by tube_id
  loop
    -- in_span[s + 1]: the latest instant of status s in the span, or null.
    select array_agg(found.observed_at order by st.status) into in_span
    from generate_series(0, 2) st (status)
    left join (select m.status, max(m.observed_at) as observed_at from measurements m
               where m.tube_id = span.tube_id and m.observed_at between span.first_at and span.last_at
               group by m.status) found on found.status = st.status;
    for s in 0..2 loop
      known := (select observed_at from latest_measurements where tube_id = span.tube_id and status = s);
      continue when known > span.last_at;
      if in_span[s + 1] is not null then
        select in_span[s + 1] as observed_at, value into latest from measurements
        where tube_id = span.tube_id and observed_at = in_span[s + 1];
      elsif known >= span.first_at then
        select observed_at, value into latest from measurements
        where tube_id = span.tube_id and status = s and observed_at < span.first_at
        order by observed_at desc limit 1;
        if not found then
          delete from latest_measurements where tube_id = span.tube_id and status = s;
          continue;
        end if;
      else
        continue;
      end if;
      insert into latest_measurements (tube_id, status, observed_at, value)
      values (span.tube_id, s, latest.observed_at, latest.value)
      on conflict (tube_id, status) do update set observed_at = excluded.observed_at, value = excluded.value;
    end loop;
  end loop;
end
$$;
