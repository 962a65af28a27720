/**
 * TimescaleDB installed on the server but not in shared_preload_libraries: `create extension` then ends
 * the session with FATAL (the extension refuses to run half-loaded), which no exception handler of a
 * migration can catch. So `gwapi migrate` asks before 002_timescaledb runs, and refuses with the fix
 * unless told to keep measurements a plain table for good: a hypertable made later from a filled table
 * rewrites it under an exclusive lock (docs/decisions/0117-timescaledb-installed-not-preloaded.md).
 */
import { UserError } from '../errors.js';
import type { Queryable } from './connect.js';

/** The migration that makes measurements a hypertable where TimescaleDB can be loaded. */
export const TIMESCALEDB_MIGRATION = 'timescaledb';

export class TimescaleDbNotPreloadedError extends UserError {
  constructor(preloaded: string | null) {
    const now = preloaded === null ? '' : ` (now ${preloaded === '' ? 'empty' : `'${preloaded}'`})`;
    super(
      'TimescaleDB is installed on this server but not preloaded, and creating it would end the session: ' +
        `add timescaledb to shared_preload_libraries${now} and restart PostgreSQL, then run \`gwapi migrate\` ` +
        'again; or run `gwapi migrate --without-timescaledb` to keep measurements a plain PostgreSQL table ' +
        'for good (docs/operations/deploy.md)',
    );
  }
}

/**
 * Throws TimescaleDbNotPreloadedError where the extension is available but its loader is not in this
 * server (the loader defines timescaledb.disable_load; a setting of that name given without the loader
 * is a placeholder, which pg_settings does not list). shared_preload_libraries is shown when this role
 * may read it.
 */
export async function refuseUnloadableTimescaleDb(sql: Queryable): Promise<void> {
  const [state] = await sql<{ unloadable: boolean; preloaded: string | null }[]>`
    select exists (select 1 from pg_available_extensions where name = 'timescaledb')
       and not exists (select 1 from pg_settings where name = 'timescaledb.disable_load') as unloadable,
       (select setting from pg_settings where name = 'shared_preload_libraries') as preloaded`;
  if (state?.unloadable) throw new TimescaleDbNotPreloadedError(state.preloaded);
}
