/** The crash drill's report: its timeline against ttl and loop_wait, the lost imports, the tokens, import speed. */
import {
  type CrashReport,
  type ImportSpeed,
  type TokenExpectation,
  windowBoundMs,
} from '../../testkit/drills/crashDrill.js';
import { count, ms } from '../../testkit/report.js';

const MUST_GIVE: Record<TokenExpectation, string> = {
  refused: '410: the new leader lacks rows it held',
  exact: 'an exact delta: a later import survived',
  'exact or refused': 'an exact delta or 410',
};

const seconds = (value: number) => `${(value / 1000).toFixed(1)} s`;

export function describeCrash(report: CrashReport) {
  const { settings } = report;
  const from = (moment: number) => seconds(moment - report.killAt);
  const lost = report.importsLost;
  const timeline =
    `SIGKILL to ${report.oldLeader}'s Patroni and PostgreSQL (${report.processesKilled} processes); ` +
    `Patroni reported ${report.newLeader || 'no'} leader running at ${from(report.leaderAt)}; ` +
    `first import done at ${from(report.firstImportAt)}; every API replica whole again at ${from(report.wholeAt)}. ` +
    `Window (kill to imports succeeding): ${seconds(report.firstImportAt - report.killAt)}, against ttl ${settings.ttl} s + ` +
    `loop_wait ${settings.loopWait} s = ${settings.ttl + settings.loopWait} s (failing beyond ${seconds(windowBoundMs(settings))}). ` +
    `Acknowledged imports lost: ${lost.length} of ${report.importsAcknowledged}` +
    (lost.length > 0
      ? ` (acknowledged ${lost.map((l) => ms(l.beforeKillMs)).join(', ')} before the kill)`
      : '') +
    '.' +
    (report.importWritesAfterClose > 0
      ? ` The import client hit postgres.js's write to a closed connection ${report.importWritesAfterClose} times ` +
        '(an uncaught TypeError, which ends a `gwapi import` process; its import had already failed).'
      : '');
  const byVerdict = new Map<string, number>();
  for (const check of report.tokens) {
    const key = `${check.verdict}|${check.expected}`;
    byVerdict.set(key, (byVerdict.get(key) ?? 0) + 1);
  }
  const tokens = {
    header: ["old primary's sync tokens: must give", 'gave', 'tokens'],
    rows: [...byVerdict].map(([key, n]) => {
      const [verdict, expected] = key.split('|') as [string, TokenExpectation];
      return [MUST_GIVE[expected], verdict, count(n)];
    }),
  };
  return { timeline, tokens };
}

export function describeImportSpeed(speeds: ImportSpeed[]) {
  return {
    header: ['synchronous_mode', 'rows per import', 'imports', 'median import', 'rows/s'],
    rows: speeds.map((speed) => [
      String(speed.synchronousMode),
      count(speed.rows),
      count(speed.imports),
      ms(speed.medianMs),
      count(speed.rowsPerSecond),
    ]),
  };
}
