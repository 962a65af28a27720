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
