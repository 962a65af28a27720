/** CPU time of processes, from /proc (Linux): the server, the database backends, this process. */
import { readFileSync } from 'node:fs';
import type { Sql } from '../../src/db/connect.js';

/** USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK). */
const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process, all threads, ms (10 ms resolution); 0 once it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** This process's CPU time, ms. */
export const ownCpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/**
 * A meter of the CPU time of the PostgreSQL backends serving `applicationName` (same machine only):
 * `start()` notes their times, `stop()` gives the sum of what each used since (a backend that appeared
 * meanwhile counts whole).
 */
export function backendCpuMeter(sql: Sql, applicationName: string) {
  const pids = async () =>
    (
      await sql<
        { pid: number }[]
      >`select pid from pg_stat_activity where application_name = ${applicationName}`
    ).map((row) => row.pid);
  let before = new Map<number, number>();
  return {
    async start() {
      before = new Map((await pids()).map((pid) => [pid, processCpuMs(pid)]));
    },
    async stop(): Promise<number> {
      let total = 0;
      for (const pid of new Set([...before.keys(), ...(await pids())])) {
        total += processCpuMs(pid) - (before.get(pid) ?? 0);
      }
      return total;
    },
  };
}
