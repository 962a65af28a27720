/** The restore drill's report as tables: the load by phase, the restore's timings, tokens and validators. */
import { LOAD_HEADER, loadRow } from '../../testkit/drills/drillReport.js';
import type { RestoreReport } from '../../testkit/drills/restoreDrill.js';
import { count, ms } from '../../testkit/report.js';

export function describeRestore(report: RestoreReport) {
  const { imports, timings, tokens, validators, keys } = report;
  const sides = ['before', 'after'] as const;
  return {
    // No load runs while the database is restored: that phase's row says so rather than NaN.
    phases: {
      header: LOAD_HEADER,
      rows: report.phases.map((phase) =>
        phase.requests.length === 0 ? loadRow(phase).map((cell, i) => (i < 2 ? cell : '-')) : loadRow(phase),
      ),
    },
    lines: [
      `restore target ${report.target} (server clock); restored on timeline ${report.timeline}`,
      `imports acknowledged before the target: ${imports.keptOfAckedBefore} of ${imports.ackedBefore} restored; ` +
        `begun after it: ${imports.keptOfBegunAfter} of ${imports.begunAfter} restored; ` +
        `running across it: ${imports.keptOfStraddling} of ${imports.straddling} restored; in part: ${imports.partial}`,
      `from the restore command: restored ${ms(timings.restored)}, PostgreSQL up ${ms(timings.started)}, ` +
        `promoted ${ms(timings.promoted)}, gwapi serve listening ${ms(timings.listening)}, ready (200) ${ms(timings.ready)}`,
      `next transaction id of the restored database ${report.xidsPassed.restored}, of the newest token after the target ${report.xidsPassed.token}`,
      `keys changed after the target (revoked, created, granted) answer after the restore ` +
        `${keys.afterRestore.revoked}, ${keys.afterRestore.created}, ${keys.afterRestore.granted}; the old timeline's ` +
        `keys differ in ${keys.changed.join(', ') || 'nothing'}; after the guide's steps ` +
        `${keys.afterGuide.revoked}, ${keys.afterGuide.created}, ${keys.afterGuide.granted}, ${keys.leftAfterGuide} lines still differing`,
    ],
    tokens: {
      header: ['token issued', 'probed', '200 exact', '200 wrong', 'rows missed', '410', 'other'],
      rows: sides.map((side) => {
        const of = tokens.filter((p) => p.side === side);
        return [
          `${side} the target`,
          count(of.length),
          count(of.filter((p) => p.status === 200 && p.wrongRows === 0).length),
          count(of.filter((p) => p.status === 200 && p.wrongRows !== 0).length),
          count(of.reduce((sum, p) => sum + (p.missedRows ?? 0), 0)),
          count(of.filter((p) => p.status === 410).length),
          count(of.filter((p) => p.status !== 200 && p.status !== 410).length),
        ];
      }),
    },
    validators: {
      header: ['validator', 'kept', 'probed', '304', 'wrong 304'],
      rows: (['If-None-Match', 'If-Modified-Since'] as const).flatMap((header) =>
        sides.map((side) => {
          const of = validators.filter((p) => p.header === header && p.side === side);
          return [
            header,
            `${side} the target`,
            count(of.length),
            count(of.filter((p) => p.status === 304).length),
            count(of.filter((p) => p.wrong).length),
          ];
        }),
      ),
    },
  };
}
