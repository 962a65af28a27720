-- A level that is a decimal of at most three places (almost every level the field records) is stored
-- as an integer of thousandths, the rest as the double they were (docs/decisions/0022). Compressed, an
-- integer series takes a fraction of the bytes of the same doubles, whose low bits change from row to
-- row; read back, `measurement_value` gives the same double either way: an int4 is exact as a double,
-- and one IEEE division is the double nearest to the decimal, which is what parsing its text gives.
--
-- Online, while the release before serves and imports: on a filled table this adds the column and the
-- check (NOT VALID, an instant) and nothing else, so every row keeps its `value` and the release before
-- reads it; `gwapi migrate --finish`, once no release before serves, lets `value` be null and moves the
-- rows that fit into thousandths, chunk by chunk. A new install is finished here.

alter table measurements add column if not exists value_thousandths int4;

-- Inlined by the planner wherever a statement reads a row's value (src/engine/read/, src/sync/, the
-- rollups and latest below).
create or replace function measurement_value(value float8, value_thousandths int4) returns float8
  language sql immutable parallel safe
  return coalesce(value, value_thousandths::float8 / 1000);

-- The thousandths of a value that has at most three places, else null (the value is then stored as
-- it is). Exact by construction: the integer's division by 1000 gives back the very same double; of the
-- zeros, only +0 (an integer has no -0).
create or replace function measurement_thousandths(value float8) returns int4
  language sql immutable parallel safe
  return case
    when value = 0 then case when float8send(value) = float8send(0) then 0 end
    when abs(value) <= 2147483.647 and round(value * 1000) / 1000 = value then round(value * 1000)::int4
  end;

-- Exactly one of the two, in every row; and on a new install the key carries both, so that a series is
-- still read from the index alone.
do $$
begin
  if exists (select from pg_constraint where conrelid = 'measurements'::regclass and conname = 'measurements_one_value') then
    return;
  end if;
  if exists (select from measurements) then
    alter table measurements add constraint measurements_one_value
      check (num_nonnulls(value, value_thousandths) = 1) not valid;
  else
    alter table measurements
      alter column value drop not null,
      add constraint measurements_one_value check (num_nonnulls(value, value_thousandths) = 1),
      drop constraint measurements_pkey,
      add primary key (tube_id, observed_at) include (value, value_thousandths, status);
  end if;
end
$$;

-- The writers' upkeep of latest_measurements (009) and the day rollups (011), with the same bodies but
-- each value read through measurement_value.
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
        select in_span[s + 1] as observed_at, measurement_value(value, value_thousandths) as value into latest
        from measurements
        where tube_id = span.tube_id and observed_at = in_span[s + 1];
      elsif known >= span.first_at then
        select observed_at, measurement_value(value, value_thousandths) as value into latest from measurements
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
    from (select observed_at, status, measurement_value(value, value_thousandths) as value
          from measurements
          where tube_id = tube and observed_at >= d.day and observed_at < d.day + make_interval(secs => 86400)
         ) as day_rows
  ) as measured
  where measured.count > 0;

  insert into measurement_day_rollups (tube_id, day, statuses, present, count, mean, min, max)
  select tube, whole.day, subset.statuses, whole.present, measured.count, measured.mean, measured.min,
         measured.max
  from measurement_day_rollups whole
  cross join (values (1::int2), (2::int2), (3::int2), (4::int2), (5::int2), (6::int2)) as subset(statuses)
  cross join lateral (
    select count(*) as count, avg(value order by observed_at) as mean, min(value) as min, max(value) as max
    from (select observed_at, status, measurement_value(value, value_thousandths) as value
          from measurements
          where tube_id = tube and observed_at >= whole.day
            and observed_at < whole.day + make_interval(secs => 86400)
         ) as day_rows
    where (subset.statuses >> status) & 1 = 1
  ) as measured
  where whole.tube_id = tube and whole.day = any(days) and whole.statuses = whole.present
    and whole.mean is not null
    and subset.statuses & whole.present = subset.statuses and subset.statuses <> whole.present;
$$;
