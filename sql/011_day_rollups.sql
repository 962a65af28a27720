-- gwapi:no-transaction
-- gwapi:replaces 89c6bc51c6ba93cf7eee74c0b99352ddea18d81142a1859a3d58a4ed98365dd6
-- Daily rollups: the aggregates of each tube's UTC days, kept by every writer in its transaction
-- (refresh_measurement_day_rollups), so that `aggregate=P1D` from a UTC midnight reads one small row
-- per day rather than every measurement of the interval.
--
-- A row holds what a P1D bucket of that day computes (src/engine/read/buckets.ts), by the same
-- aggregates over the same rows in the same order, so the same doubles: the mean is PostgreSQL's
-- avg(value order by observed_at), which sums in time order, and a sum of partial sums would round
-- differently. So a row serves only a bucket that is exactly its day, and only a status filter that
-- passes exactly its rows: `statuses` is the set summarised (bit s for status code s), `present` the
-- set the day holds. A day holds a row for `present`, and, when it holds more than one status, a row
-- for every other non-empty subset of it; the statuses a filter passes of a day are then always a row.
-- Days without measurements have no row.
--
-- avg raises an error where its sums overflow, and a bucket computed when read fails so. A day with a
-- value beyond 1e140, or not finite, where they might, has a row for `present` with no mean and no
-- others: its buckets are computed when read, as before, and a writer never fails on the rollups.
--
-- Online: statement by statement, outside a transaction, and the days stored before summed a tube's
-- month at a time (below). 1.3.1's text, which this replaces with the same end state, summed them all in
-- one transaction that made every writer wait (decision 0116).
--
-- Columns ordered for alignment: 8-byte ones first (no padding inside the tuple).
create table if not exists measurement_day_rollups (
  day timestamptz not null,
  count bigint not null,
  mean double precision,
  min double precision not null,
  max double precision not null,
  tube_id integer not null,
  statuses int2 not null check (statuses between 1 and 7),
  present int2 not null check (present between 1 and 7 and statuses & present = statuses),
  primary key (tube_id, day, statuses)
);

-- The UTC midnight that starts the day of `instant`.
create or replace function measurement_day(instant timestamptz) returns timestamptz language sql immutable as $$
  select date_bin(make_interval(secs => 86400), instant, '2000-01-01 00:00:00+00'::timestamptz)
$$;

-- Computes again, from the measurements, the rollups of `tube` on `days` (UTC midnights).
create or replace function rollup_measurement_days(tube integer, days timestamptz[]) returns void language sql as $$
  delete from measurement_day_rollups where tube_id = tube and day = any(days);

  insert into measurement_day_rollups (tube_id, day, statuses, present, count, mean, min, max)
  select tube, d.day, measured.present, measured.present, measured.count,
         case when measured.large = 0 then measured.mean end, measured.min, measured.max
  from unnest(days) as d(day)
  cross join lateral (
    select count(*) as count, min(value) as min, max(value) as max, bit_or(1 << status)::int2 as present,
           -- Over every row when none is left out (large: 0): then the same doubles as avg over all.
           avg(value order by observed_at) filter (where abs(value) < 1e140::float8) as mean,
           count(*) filter (where not abs(value) < 1e140::float8) as large
    from measurements
    where tube_id = tube and observed_at >= d.day and observed_at < d.day + make_interval(secs => 86400)
  ) as measured
  where measured.count > 0;

  insert into measurement_day_rollups (tube_id, day, statuses, present, count, mean, min, max)
  select tube, whole.day, subset.statuses, whole.present, measured.count, measured.mean, measured.min,
         measured.max
  from measurement_day_rollups whole
  cross join (values (1::int2), (2::int2), (3::int2), (4::int2), (5::int2), (6::int2)) as subset(statuses)
  cross join lateral (
    select count(*) as count, avg(value order by observed_at) as mean, min(value) as min, max(value) as max
    from measurements
    where tube_id = tube and observed_at >= whole.day and observed_at < whole.day + make_interval(secs => 86400)
      and (subset.statuses >> status) & 1 = 1
  ) as measured
  where whole.tube_id = tube and whole.day = any(days) and whole.statuses = whole.present
    and whole.mean is not null
    and subset.statuses & whole.present = subset.statuses and subset.statuses <> whole.present;
$$;

-- Brings the rollups up to date with what the current transaction wrote: every day of every tube that
-- its change rows span, or that holds a measurement it corrected (another value or status, or removed).
-- Every writer of measurements calls it after its change rows and corrections, as it calls
-- refresh_latest_measurements().
create or replace function refresh_measurement_day_rollups() returns void language plpgsql as $$
begin
  perform rollup_measurement_days(tube_id, array_agg(day))
  from (
    select c.tube_id, d.day
    from measurement_changes c
    cross join lateral generate_series(measurement_day(c.first_at), measurement_day(c.last_at),
                                       make_interval(secs => 86400)) as d(day)
    where c.xid = pg_current_xact_id()
    union
    select tube_id, measurement_day(observed_at)
    from measurement_corrections
    where xid = pg_current_xact_id()
  ) as touched
  group by tube_id;
end
$$;

-- Computes again every rollup of `tube`: for measurements written by other means than the writers (a
-- demo's or a test's data), and for the measurements stored before this migration.
create or replace function rollup_tube_measurements(tube integer) returns void language sql as $$
  delete from measurement_day_rollups where tube_id = tube;
  select rollup_measurement_days(tube, array(
    select generate_series(measurement_day(min(observed_at)), measurement_day(max(observed_at)),
                           make_interval(secs => 86400))
    from measurements
    where tube_id = tube));
$$;

-- The days stored before, summed a tube's 31 days at a time, each in a transaction of its own that holds
-- SHARE on measurements: no writer may commit between the reading of a tube's days and the writing of
-- their rollups, so writers wait for one such batch (readers do not wait at all). A batch that finds
-- the lock taken gives up at lock_timeout, lets the writers in, and is tried again; run again after a
-- failure, this sums every day again (the same rows).
do $$
declare
  tube integer;
  first_day timestamptz;
  last_day timestamptz;
  batch timestamptz;
  attempt integer;
begin
  for tube in select id from tubes order by id loop
    select measurement_day(min(observed_at)), measurement_day(max(observed_at)) into first_day, last_day
    from measurements where tube_id = tube;
    continue when first_day is null;
    for batch in select generate_series(first_day, last_day, make_interval(secs => 31 * 86400)) loop
      attempt := 1;
      loop
        begin
          lock table measurements in share mode;
          perform rollup_measurement_days(tube, array(
            select generate_series(batch, least(batch + make_interval(secs => 30 * 86400), last_day),
                                   make_interval(secs => 86400))));
          exit;
        exception when lock_not_available then
          if attempt >= 20 then
            raise;
          end if;
          perform pg_sleep(least(0.05 * 2 ^ attempt, 5) * (0.5 + random()));
          attempt := attempt + 1;
        end;
      end loop;
      commit;
    end loop;
  end loop;
end
$$;
