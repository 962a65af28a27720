/** What every drill of a change of primary asserts of its load (testkit/drills/primaryProbes.ts). */
import type { Test } from 'tap';
import type { DrillRequest } from '../../testkit/drills/drillLoad.js';
import type { PhaseWindow } from '../../testkit/drills/phases.js';

/** Each phase ran requests of the load, and none of them failed, in the window neither. */
export function assertLoadServed(t: Test, phases: (PhaseWindow & { requests: DrillRequest[] })[]): void {
  for (const { phase, requests } of phases) {
    t.ok(requests.length > 0, `${phase}: ${requests.length} requests of the load`);
  }
  t.same(
    phases.flatMap((phase) => phase.requests).filter((r) => r.outcome !== 'ok'),
    [],
    'series and discovery: every request answered, in the window too',
  );
}
