/**
 * The switch-over and crash drills' reports as tables: the phases, and failures by kind, of the load and
 * of the probes that need the primary; and the switch-over's timeline.
 */

import type { DrillRequest } from '../../testkit/drills/drillLoad.js';
import { causes, LOAD_HEADER, latencies, loadRow, percentile } from '../../testkit/drills/drillReport.js';
import type { PhaseWindow } from '../../testkit/drills/phases.js';
import type { Probe } from '../../testkit/drills/primaryProbes.js';
import type { SwitchoverReport } from '../../testkit/drills/switchoverDrill.js';
import { count, ms } from '../../testkit/report.js';

const PROBE_KINDS: Probe['kind'][] = ['fresh key', 'import', 'revoked key'];

const failedOf = (probes: Probe[], kind: Probe['kind']) => causes(probes.filter((p) => p.kind === kind));

type ProbedPhase = PhaseWindow & { requests: DrillRequest[]; probes: Probe[] };

/** Each phase's load and failed probes by kind; and the whole run's requests by kind, with their p99. */
export function describeProbedPhases(probedPhases: ProbedPhase[]) {
  const phases = {
    header: [...LOAD_HEADER, ...PROBE_KINDS.map((kind) => `${kind}: failed`)],
    rows: probedPhases.map((phase) => [
      ...loadRow(phase),
      ...PROBE_KINDS.map((kind) => failedOf(phase.probes, kind)),
    ]),
  };
  const requests: DrillRequest[] = probedPhases.flatMap((phase) => phase.requests);
  const probes = probedPhases.flatMap((phase) => phase.probes);
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
  return { phases, kinds };
}

export function describeSwitchover(report: SwitchoverReport) {
  const from = (moment: number) => ms(moment - report.stopAt);
  const timeline =
    `primary stopped (fast) after ${from(report.stoppedAt)}; standby promoted at ${from(report.promotedAt)}; ` +
    `the other standby following at ${from(report.followedAt)}; every API replica whole again at ` +
    `${from(report.wholeAt)}, ${ms(report.wholeAt - report.promotedAt)} after the promotion; ` +
    `first import after the promotion done at ${from(report.firstImportAt)}. ` +
    `Window (stop to whole): ${ms(report.wholeAt - report.stopAt)}. ` +
    `${report.importsKept} of ${report.importsAcknowledged} acknowledged imports on the new primary; ` +
    `the other standby ${report.followerStreams ? 'replays' : 'does NOT replay'} the new primary; ` +
    `${report.tokens.filter((check) => check.verdict === 'exact delta').length} of ${report.tokens.length} sync tokens ` +
    'the primary issued before the stop gave their exact delta afterwards.';
  return { ...describeProbedPhases(report.phases), timeline };
}
