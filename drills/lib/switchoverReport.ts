/** The switch-over drill's report as tables: the phases, the timeline, and failures by kind. */

import type { DrillRequest } from '../../testkit/drills/drillLoad.js';
import { causes, LOAD_HEADER, latencies, loadRow, percentile } from '../../testkit/drills/drillReport.js';
import type { Probe, SwitchoverReport } from '../../testkit/drills/switchoverDrill.js';
import { count, ms } from '../../testkit/report.js';

const PROBE_KINDS: Probe['kind'][] = ['fresh key', 'import', 'revoked key'];

const failedOf = (probes: Probe[], kind: Probe['kind']) => causes(probes.filter((p) => p.kind === kind));

export function describeSwitchover(report: SwitchoverReport) {
  const phases = {
    header: [...LOAD_HEADER, ...PROBE_KINDS.map((kind) => `${kind}: failed`)],
    rows: report.phases.map((phase) => [
      ...loadRow(phase),
      ...PROBE_KINDS.map((kind) => failedOf(phase.probes, kind)),
    ]),
  };
  const requests: DrillRequest[] = report.phases.flatMap((phase) => phase.requests);
  const probes = report.phases.flatMap((phase) => phase.probes);
  const kinds = {
    header: ['kind', 'requests', 'ok', 'failed (cause)', 'p99'],
    rows: [
      ...(['series', 'discovery'] as const).map((kind) => {
        const of = requests.filter((r) => r.kind === kind);
        return [
          kind,
          count(of.length),
          count(of.filter((r) => r.outcome === 'ok').length),
          causes(of),
          ms(percentile(latencies(of), 0.99)),
        ];
      }),
      ...PROBE_KINDS.map((kind) => {
        const of = probes.filter((p) => p.kind === kind);
        const ok = of.filter((p) => p.outcome === 'ok');
        return [
          kind,
          count(of.length),
          count(ok.length),
          causes(of),
          ms(
            percentile(
              ok.map((p) => p.endedAt - p.startedAt),
              0.99,
            ),
          ),
        ];
      }),
    ],
  };
  const from = (moment: number) => ms(moment - report.stopAt);
  const timeline =
    `primary stopped (fast) after ${from(report.stoppedAt)}; standby promoted at ${from(report.promotedAt)}; ` +
    `the other standby following at ${from(report.followedAt)}; every API replica whole again at ` +
    `${from(report.wholeAt)}, ${ms(report.wholeAt - report.promotedAt)} after the promotion; ` +
    `first import after the promotion done at ${from(report.firstImportAt)}. ` +
    `Window (stop to whole): ${ms(report.wholeAt - report.stopAt)}. ` +
    `${report.importsKept} of ${report.importsAcknowledged} acknowledged imports on the new primary; ` +
    `the other standby ${report.followerStreams ? 'replays' : 'does NOT replay'} the new primary.`;
  return { phases, kinds, timeline };
}
