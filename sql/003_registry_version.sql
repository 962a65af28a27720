-- A version number of the registry (wells and tubes), raised by every statement that changes either.
-- The API caches the discovery body it built for a set of grants together with the version it read
-- in the same snapshot; one tiny read per request tells whether the cached body is still exact, so
-- an import or a manual change is visible to the very next request on every replica.
create table registry_version (
  only_row boolean primary key default true check (only_row),
  version bigint not null
);
insert into registry_version (version) values (1);

create function raise_registry_version() returns trigger language plpgsql as $$
begin
  update registry_version set version = version + 1;
  return null;
end
$$;

-- Per statement, not per row: an import of thousands of tubes raises the version once.
create trigger wells_change_registry_version
  after insert or update or delete or truncate on wells
  for each statement execute function raise_registry_version();
create trigger tubes_change_registry_version
  after insert or update or delete or truncate on tubes
  for each statement execute function raise_registry_version();
