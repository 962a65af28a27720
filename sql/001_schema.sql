-- Registry, measurements and API keys. Plain PostgreSQL 14+; 002 turns measurements into a
-- TimescaleDB hypertable where the extension is available.

-- A well is known by its name (the registry file has no other identifier for it).
create table wells (
  id integer generated always as identity primary key,
  name text not null unique
);

-- A tube has a public UUID (`identifier`) and a small internal key (`id`) that measurements reference:
-- 4 bytes per measurement row instead of 16.
create table tubes (
  id integer generated always as identity primary key,
  identifier uuid not null unique,
  well_id integer not null references wells (id),
  number text not null,
  unit text not null default 'm',
  vertical_datum text not null default 'NAP',
  unique (well_id, number)
);

-- value is double precision: every decimal of up to 15 significant digits maps to a distinct double,
-- and PostgreSQL (extra_float_digits = 1, the default since 12) and JavaScript both print the shortest
-- text that reads back as the same double, so an imported "-1.23" comes back as -1.23. A double is
-- 8 fixed bytes, compares and decodes faster than numeric, and compresses well in TimescaleDB.
-- The import rejects values with more than 15 significant digits rather than rounding them.
--
-- No foreign key to tubes: the import checks tube identifiers for the whole file at once, and a
-- per-row referential check would cost more than the COPY itself. Tubes are never deleted.
create table measurements (
  tube_id integer not null,
  observed_at timestamptz not null,
  value double precision not null check (value not in ('NaN', 'Infinity', '-Infinity')),
  -- "One tube, one time range, in order" is answered from this index alone (index-only scan):
  -- it carries value, so the heap is not visited once the visibility map is set.
  primary key (tube_id, observed_at) include (value)
);

-- Only a hash of each key is stored (SHA-256: keys are 256 random bits, so a slow hash adds nothing).
-- `id` is the non-secret name of a key in logs and in the CLI.
create table api_keys (
  id text primary key,
  name text not null,
  key_hash bytea not null unique check (length(key_hash) = 32),
  all_tubes boolean not null default false,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create table api_key_grants (
  key_id text not null references api_keys (id),
  tube_id integer not null references tubes (id),
  granted_at timestamptz not null default now(),
  primary key (key_id, tube_id)
);
