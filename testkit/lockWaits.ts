/**
 * The longest lock wait of any session of a database while some work runs, sampled from pg_locks
 * (`waitstart`, PostgreSQL 14+): what a migration must keep under its lock_timeout, for the API's
 * readers and writers as for itself. Resolution: the sampling period.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from '../src/db/connect.js';

export interface LockWait {
  ms: number;
  /** Who waited for what, e.g. `gwapi: AccessShareLock on relation tubes`. */
  what: string;
}

const SAMPLE_MS = 20;

/**
 * What a wait may exceed lock_timeout by and still be a migration's own: its waits end by a timer that a
 * busy machine runs a little late; a wait of anyone else that came near the bound would be far over it.
 */
export const LOCK_WAIT_SLACK_MS = 100;

/** Samples until `stop`, which resolves with the longest wait seen (0 ms and '' when none). */
export function sampleLockWaits(sql: Sql, periodMs = SAMPLE_MS) {
  let longest: LockWait = { ms: 0, what: '' };
  let running = true;
  const loop = (async () => {
    while (running) {
      const [wait] = await sql<LockWait[]>`
        select extract(epoch from clock_timestamp() - l.waitstart)::float8 * 1000 as ms,
               a.application_name || ': ' || l.mode || ' on ' || l.locktype ||
                 coalesce(' ' || l.relation::regclass::text, '') as what
        from pg_locks l join pg_stat_activity a using (pid)
        where not l.granted and l.waitstart is not null and a.datname = current_database()
          -- A concurrent index build waiting for an older transaction to end: it queues for no lock,
          -- so no one waits behind it (src/db/migrate.ts, CONCURRENT_BUILD_LOCK_TIMEOUT_MS).
          and l.locktype <> 'virtualxid'
        order by l.waitstart limit 1`;
      if (wait && wait.ms > longest.ms) longest = wait;
      await sleep(periodMs);
    }
  })();
  return {
    async stop(): Promise<LockWait> {
      running = false;
      await loop;
      return longest;
    },
  };
}
