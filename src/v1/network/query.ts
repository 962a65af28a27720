/**
 * The query of the network measurements endpoint: the measurements query (from, to, aggregate, format, with
 * its interval rule) extended by `tubes`, `changedSince` and `bbox`. The route validates with this schema and
 * the OpenAPI document lists its parameters from it, as for the series.
 */
import { z } from 'zod';
import { bboxParameter } from '../bbox.js';
import { GIVEN_TWICE, MeasurementsQuery } from '../measurementsQuery.js';
import { tubesParameter } from '../tubesInView.js';

const changedSinceParameter = z
  .string({ error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : 'must be a sync token') })
  .optional()
  .meta({
    param: {
      description:
        'The sync token of an earlier response of this endpoint (its `Sync-Token`): only what was ' +
        'written after that response was read, for the selected tubes in [from, to). Tubes without such ' +
        'a measurement are left out. A token this service did not issue to this key is 400; one it can ' +
        'no longer answer (the key’s view changed, the history kept is shorter, or with `bbox` a well ' +
        'of the selection has moved since) is 410: sync again without it.',
    },
  });

export const NetworkQuery = MeasurementsQuery.safeExtend({
  tubes: tubesParameter,
  changedSince: changedSinceParameter,
  bbox: bboxParameter,
});

export type NetworkQuery = z.output<typeof NetworkQuery>;
