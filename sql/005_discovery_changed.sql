-- Discovery's Last-Modified may follow only what the key can see: the registry's change time of 004
-- moves for every tube, hidden ones too, and would tell a key that something it may not see changed.
-- A key's discovery derives from its grants (api_keys.access_changed_at, 004), its tubes
-- (tubes.series_changed_at, raised by any change of a tube's registry fields) and their wells' names:
-- this is the last of those.
alter table wells add column changed_at timestamptz not null default now();

create function mark_well_changed() returns trigger language plpgsql as $$
begin
  new.changed_at := clock_timestamp();
  return new;
end
$$;

create trigger wells_name_changed
  before update on wells
  for each row
  when (new.name is distinct from old.name)
  execute function mark_well_changed();
