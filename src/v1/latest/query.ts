/**
 * The query of latest: which tubes (`tubes` and `bbox`, as on the network), which statuses pass (`status`), what
 * each row carries (`include`) and the format. No interval: `from` and `to`, like any parameter it does
 * not know, are ignored. The route validates with this schema and the OpenAPI document lists its
 * parameters from it.
 */
import { z } from 'zod';
import { LATEST_FORMAT_NAMES } from '../../engine/write/writer.js';
import { bboxParameter } from '../bbox.js';
import { GIVEN_TWICE, StatusQuery } from '../measurementsQuery.js';
import { tubesParameter } from '../tubesInView.js';

/** `must be json, csv, arrow or geojson`: the formats in the order a tie is broken. */
const FORMAT_MESSAGE = `must be ${LATEST_FORMAT_NAMES.slice(0, -1).join(', ')} or ${LATEST_FORMAT_NAMES.at(-1)}`;

const formatParameter = z
  .enum(LATEST_FORMAT_NAMES, {
    error: (issue) => (Array.isArray(issue.input) ? GIVEN_TWICE : FORMAT_MESSAGE),
  })
  .optional()
  .meta({
    param: {
      description:
        'The format: `json` (application/json), `csv` (text/csv), `arrow` ' +
        '(application/vnd.apache.arrow.stream, an Arrow IPC stream) or `geojson` ' +
        '(application/geo+json, a FeatureCollection). When given, it decides over the Accept header; ' +
        'without it, Accept decides: the type with the highest q, JSON before CSV before Arrow before ' +
        'GeoJSON among equals, and JSON when none is acceptable.',
    },
  });

export const LatestQuery = StatusQuery.extend({
  tubes: tubesParameter,
  bbox: bboxParameter,
  format: formatParameter,
});

export type LatestQuery = z.output<typeof LatestQuery>;
