/** The drill's report as tables: what the clients saw in each phase, the kill, and throughput. */
import { count, ms } from '../report.js';
import type { DrillRequest } from './drillLoad.js';
import type { PhaseWindow } from './phases.js';
import type { DrillReport } from './rollingDrill.js';

/** The value `fraction` of the way up the sorted values (nearest rank); NaN for none. */
export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

export const latencies = (requests: DrillRequest[]) =>
  requests.filter((r) => r.outcome === 'ok').map((r) => r.endedAt - r.startedAt);

/** Failures by cause, e.g. `2 connection reset, 1 cut off`; `0` for none. */
export function causes(requests: { outcome: string; cause?: string }[]): string {
  const byCause = new Map<string, number>();
  for (const { outcome, cause } of requests) {
    if (outcome === 'failed') byCause.set(cause!, (byCause.get(cause!) ?? 0) + 1);
  }
  return [...byCause].map(([cause, n]) => `${n} ${cause}`).join(', ') || '0';
}

const retriedOk = (requests: DrillRequest[]) => requests.filter((r) => r.retry === 'ok').length;

/** What the clients saw in a phase: the first columns of every drill's table of phases. */
export const LOAD_HEADER = [
  'phase',
  'seconds',
  'requests',
  'ok',
  '429',
  'failed (cause)',
  'retry ok',
  'p50',
  'p99',
];

export function loadRow({ phase, from, to, requests }: PhaseWindow & { requests: DrillRequest[] }): string[] {
  return [
    phase,
    ((to - from) / 1000).toFixed(1),
    count(requests.length),
    count(requests.filter((r) => r.outcome === 'ok').length),
    count(requests.filter((r) => r.outcome === 'limited').length),
    causes(requests),
    count(retriedOk(requests)),
    ms(percentile(latencies(requests), 0.5)),
    ms(percentile(latencies(requests), 0.99)),
  ];
}

export function describeReport(report: DrillReport) {
  const phases = {
    header: [...LOAD_HEADER, 'stream at SIGTERM'],
    rows: report.phases.map((phase) => [
      ...loadRow(phase),
      phase.drained === undefined
        ? ''
        : phase.drained.whole
          ? 'whole'
          : `cut, retry ${phase.drained.retriedOk ? 'ok' : 'failed'}`,
    ]),
  };
  const { kill } = report;
  const killText =
    `SIGKILL ${kill.victim}: ${kill.inFlight} load requests in flight, ${kill.failed} of them failed ` +
    `(${kill.failedRetriedOk} retried with success), ${kill.failedStartedAfter} failed of those begun after it; ` +
    `HAProxy took it out after ${ms(kill.downAfterMs)} (check interval × fall: ${ms(kill.downBoundMs)}); ` +
    `${kill.cut} of ${kill.held} streams held on it cut; its concurrency slots came back after ` +
    `${ms(kill.slotsBackAfterMs)} (lease ${ms(kill.leaseMs)}; ${kill.slotsRefused} attempts refused before); ` +
    `Redis counted ${kill.slotsInRedisAtKill} of them at the kill and none after ${ms(kill.slotsFreeInRedisAfterMs)}. ` +
    `HAProxy's counters over the kill: ${kill.victimCounters.econ} connection errors, ${kill.victimCounters.eresp} ` +
    `response errors and ${kill.victimCounters.wredis} requests redispatched on ${kill.victim}; ` +
    `${kill.otherServersErrors} errors on the other replicas.`;
  const throughput = {
    header: ['replicas', 'requests/s', 'p50', 'p99', 'not ok'],
    rows: report.throughput.map(({ replicas, requests, durationMs }) => [
      String(replicas),
      count(requests.length / (durationMs / 1000)),
      ms(percentile(latencies(requests), 0.5)),
      ms(percentile(latencies(requests), 0.99)),
      count(requests.filter((r) => r.outcome !== 'ok').length),
    ]),
  };
  return { phases, kill: killText, throughput };
}
