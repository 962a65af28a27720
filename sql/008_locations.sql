-- Where each well stands and how each tube sits in the ground: a well's location (WGS 84 decimal
-- degrees) and a tube's elevations, in the tube's unit relative to its vertical datum (the scale of its
-- levels, so a level compares with its screen directly). Null is unknown; a registry import states each
-- listed well and tube whole, so a field it leaves out becomes null again.
alter table wells
  add column longitude double precision,
  add column latitude double precision,
  add constraint wells_location_whole check ((longitude is null) = (latitude is null)),
  -- 'NaN' sorts above every number in PostgreSQL, so the ranges refuse it as they refuse ±Infinity.
  add constraint wells_longitude_in_range check (longitude between -180 and 180),
  add constraint wells_latitude_in_range check (latitude between -90 and 90);

alter table tubes
  add column ground_level double precision,
  add column tube_top double precision,
  add column screen_top double precision,
  add column screen_bottom double precision,
  add constraint tubes_ground_level_finite check (ground_level not in ('NaN', 'Infinity', '-Infinity')),
  add constraint tubes_tube_top_finite check (tube_top not in ('NaN', 'Infinity', '-Infinity')),
  add constraint tubes_screen_top_finite check (screen_top not in ('NaN', 'Infinity', '-Infinity')),
  add constraint tubes_screen_bottom_finite check (screen_bottom not in ('NaN', 'Infinity', '-Infinity')),
  add constraint tubes_screen_whole check ((screen_top is null) = (screen_bottom is null)),
  add constraint tubes_screen_top_above_bottom check (screen_top > screen_bottom),
  add constraint tubes_tube_top_not_below_screen check (tube_top >= screen_top);

-- Discovery shows both, so a change of either raises the registry version (004's triggers, given the
-- new columns) and moves the Last-Modified of the keys that see it (005). Neither is in a series or a
-- network document, nor in a sync token's view: their validators and tokens stay as they are, which is
-- why these change times are columns of their own and not series_changed_at or wells.changed_at.
-- Null until the first change: discovery takes the latest of the change times, and greatest() skips
-- nulls, so migrating moves no Last-Modified.
alter table wells add column location_changed_at timestamptz;
alter table tubes add column elevations_changed_at timestamptz;

create function mark_location_changed() returns trigger language plpgsql as $$
begin
  new.location_changed_at := clock_timestamp();
  return new;
end
$$;

create trigger wells_location_changed
  before update on wells
  for each row
  when ((new.longitude, new.latitude) is distinct from (old.longitude, old.latitude))
  execute function mark_location_changed();

create function mark_elevations_changed() returns trigger language plpgsql as $$
begin
  new.elevations_changed_at := clock_timestamp();
  return new;
end
$$;

create trigger tubes_elevations_changed
  before update on tubes
  for each row
  when ((new.ground_level, new.tube_top, new.screen_top, new.screen_bottom)
        is distinct from (old.ground_level, old.tube_top, old.screen_top, old.screen_bottom))
  execute function mark_elevations_changed();

-- 004's registry triggers, with the new columns among the registry's.
drop trigger wells_updated_registry_version on wells;
create trigger wells_updated_registry_version after update on wells
  referencing old table as old_rows new table as new_rows
  for each statement execute function raise_registry_version_if_changed('id, name, longitude, latitude');

drop trigger tubes_updated_registry_version on tubes;
create trigger tubes_updated_registry_version after update on tubes
  referencing old table as old_rows new table as new_rows
  for each statement
  execute function raise_registry_version_if_changed(
    'id, identifier, well_id, number, unit, vertical_datum, ground_level, tube_top, screen_top, screen_bottom');
