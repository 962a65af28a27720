-- What the validators of conditional requests (ETag, Last-Modified) derive from, kept in the same
-- transaction as each change, and moved only by changes that change something: the same file
-- imported again leaves every validator as it was.

-- A tube's series: raised by a measurement import that inserts or changes rows of the tube (the
-- importers do it: TimescaleDB has no transition tables on hypertables, and a row trigger on
-- measurements would cost every imported row) and by a change of the tube's registry fields (below).
alter table tubes
  add column series_version bigint not null default 1,
  add column series_changed_at timestamptz not null default now();

create function mark_series_changed() returns trigger language plpgsql as $$
begin
  new.series_version := old.series_version + 1;
  new.series_changed_at := clock_timestamp();
  return new;
end
$$;

create trigger tubes_series_changed
  before update on tubes
  for each row
  when ((new.identifier, new.well_id, new.number, new.unit, new.vertical_datum)
        is distinct from (old.identifier, old.well_id, old.number, old.unit, old.vertical_datum))
  execute function mark_series_changed();

-- The registry version of 003 was raised by every statement on wells or tubes, even one that changed
-- no row. Now only rows that differ in a registry column raise it (a tube's series columns are not
-- the registry's), and the time of that change is kept for discovery's Last-Modified.
alter table registry_version add column changed_at timestamptz not null default now();

drop trigger wells_change_registry_version on wells;
drop trigger tubes_change_registry_version on tubes;

create or replace function raise_registry_version() returns trigger language plpgsql as $$
begin
  update registry_version set version = version + 1, changed_at = clock_timestamp();
  return null;
end
$$;

-- TG_ARGV[0]: the registry columns of the table. Each event has its own trigger, as a trigger with
-- transition tables takes one event; the branches not taken are never planned.
create function raise_registry_version_if_changed() returns trigger language plpgsql as $$
declare
  changed boolean;
begin
  if tg_op = 'INSERT' then
    changed := exists (select from new_rows);
  elsif tg_op = 'DELETE' then
    changed := exists (select from old_rows);
  else
    execute format('select exists (select %1$s from new_rows except all select %1$s from old_rows)',
                   tg_argv[0])
      into changed;
  end if;
  if changed then
    update registry_version set version = version + 1, changed_at = clock_timestamp();
  end if;
  return null;
end
$$;

create trigger wells_inserted_registry_version after insert on wells
  referencing new table as new_rows
  for each statement execute function raise_registry_version_if_changed('id, name');
create trigger wells_updated_registry_version after update on wells
  referencing old table as old_rows new table as new_rows
  for each statement execute function raise_registry_version_if_changed('id, name');
create trigger wells_deleted_registry_version after delete on wells
  referencing old table as old_rows
  for each statement execute function raise_registry_version_if_changed('id, name');
create trigger wells_truncated_registry_version after truncate on wells
  for each statement execute function raise_registry_version();

create trigger tubes_inserted_registry_version after insert on tubes
  referencing new table as new_rows
  for each statement
  execute function raise_registry_version_if_changed('id, identifier, well_id, number, unit, vertical_datum');
create trigger tubes_updated_registry_version after update on tubes
  referencing old table as old_rows new table as new_rows
  for each statement
  execute function raise_registry_version_if_changed('id, identifier, well_id, number, unit, vertical_datum');
create trigger tubes_deleted_registry_version after delete on tubes
  referencing old table as old_rows
  for each statement
  execute function raise_registry_version_if_changed('id, identifier, well_id, number, unit, vertical_datum');
create trigger tubes_truncated_registry_version after truncate on tubes
  for each statement execute function raise_registry_version();

-- What a key may read changed: a grant given or taken, or the all-tubes flag set or cleared.
-- Discovery's Last-Modified is the later of this and the registry's change.
alter table api_keys add column access_changed_at timestamptz not null default now();

create function mark_access_changed() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    update api_keys set access_changed_at = clock_timestamp() where id in (select key_id from old_rows);
  else
    update api_keys set access_changed_at = clock_timestamp() where id in (select key_id from new_rows);
  end if;
  return null;
end
$$;

create trigger api_key_grants_inserted after insert on api_key_grants
  referencing new table as new_rows
  for each statement execute function mark_access_changed();
create trigger api_key_grants_deleted after delete on api_key_grants
  referencing old table as old_rows
  for each statement execute function mark_access_changed();

create function mark_all_tubes_changed() returns trigger language plpgsql as $$
begin
  new.access_changed_at := clock_timestamp();
  return new;
end
$$;

create trigger api_keys_all_tubes_changed
  before update on api_keys
  for each row when (new.all_tubes is distinct from old.all_tubes)
  execute function mark_all_tubes_changed();
