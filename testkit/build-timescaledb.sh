#!/usr/bin/env bash
# Builds TimescaleDB from a source archive for Debian's PostgreSQL 15 and installs it into a copy of
# that PostgreSQL tree, in a cache outside the clone (testkit/timescale.ts starts servers from it).
#
#   bash testkit/build-timescaledb.sh ARCHIVE.tar.gz
#
# Installed into /usr/lib/postgresql/15 itself, the library would make `create extension timescaledb`
# end the session in every cluster that does not preload it: hence a tree of its own. PostgreSQL finds
# its lib and share folders relative to its own binary, so a copy of both runs as it is.
# The cache is keyed by the archive's hash and the server's version: a second run with the same two
# reuses it and builds nothing. Needs cmake, a C compiler and postgresql-server-dev-15.
set -euo pipefail

archive=${1:?usage: build-timescaledb.sh ARCHIVE.tar.gz}
[ -f "$archive" ] || { echo "build-timescaledb: no archive at $archive" >&2; exit 2; }
pg_config=/usr/lib/postgresql/15/bin/pg_config
[ -x "$pg_config" ] || { echo "build-timescaledb: needs postgresql-15 and postgresql-server-dev-15" >&2; exit 2; }
[ -d "$($pg_config --includedir-server)" ] || { echo "build-timescaledb: needs postgresql-server-dev-15" >&2; exit 2; }
command -v cmake >/dev/null || { echo "build-timescaledb: needs cmake" >&2; exit 2; }

hash=$(sha256sum "$archive" | cut -c1-12)
pg_version=$($pg_config --version | awk '{print $2}')
# As root, the server runs as `postgres`, which cannot enter root's home: then the cache is a system one.
if [ "$(id -u)" = 0 ]; then default_cache=/var/cache/gwapi-timescaledb; else default_cache=$HOME/.cache/gwapi-timescaledb; fi
cache=${GWAPI_TIMESCALEDB_CACHE:-$default_cache}
prefix="$cache/$hash-pg$pg_version"
# The stable name testkit looks for: the newest build.
current="$cache/current"

if [ -x "$prefix/usr/lib/postgresql/15/bin/postgres" ] && [ -f "$prefix/.complete" ]; then
  ln -sfn "$prefix" "$current"
  echo "build-timescaledb: cached in $prefix"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rm -rf "$prefix"
mkdir -p "$prefix/usr/lib/postgresql" "$prefix/usr/share/postgresql"
cp -a /usr/lib/postgresql/15 "$prefix/usr/lib/postgresql/"
cp -a /usr/share/postgresql/15 "$prefix/usr/share/postgresql/"

tar -xzf "$archive" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
started=$(date +%s)
# The compiler's warnings are the upstream project's: kept in a log, shown only when the build fails.
log="$work/build.log"
if ! (
  cd "$src"
  ./bootstrap -DREGRESS_CHECKS=OFF -DTAP_CHECKS=OFF -DUSE_TELEMETRY=OFF -DWARNINGS_AS_ERRORS=OFF \
    -DPG_CONFIG="$pg_config" -DCMAKE_BUILD_TYPE=Release
  cd build
  make -j"$(nproc)"
  make install DESTDIR="$prefix"
) >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "build-timescaledb: the build failed (above: the end of its log)" >&2
  exit 1
fi
# The copy's postgres must be able to read what it serves when run as the unprivileged server user.
chmod -R a+rX "$cache"
touch "$prefix/.complete"
ln -sfn "$prefix" "$current"
echo "build-timescaledb: built $(basename "$src") for PostgreSQL $pg_version in $(($(date +%s) - started)) s, into $prefix"
