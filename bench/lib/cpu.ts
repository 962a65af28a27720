/**
 * CPU time of the database backends and of this process (a server process's own: processCpuMs in
 * testkit/processes.ts).
 */
import { readFileSync } from 'node:fs';
import type { Sql } from '../../src/db/connect.js';
import { processCpuMs } from '../../testkit/processes.js';

/** USER_HZ, the unit of /proc's times (testkit/processes.ts). */
const CLOCK_TICKS_PER_SECOND = 100;

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

/**
 * CPU time of this process's children that have ended and been waited for (cutime + cstime in
 * /proc/self/stat, which include their own waited-for children), ms; 10 ms resolution. The difference
 * across a child's run, from its start to its exit event, is what that child used, when no other child
 * ends meanwhile.
 */
export function endedChildrenCpuMs(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / CLOCK_TICKS_PER_SECOND;
}
