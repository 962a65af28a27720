/**
 * The network as `application/json`: its head, then `"series"`, whose elements the series' own writer
 * (jsonSeries) writes, so that each is byte for byte what the series endpoint gives for its tube.
 */
import { compileSerializer } from '../../domain/jsonSchema.js';
import { NetworkHead } from '../networkSchemas.js';
import { jsonSeries } from './json.js';
import type { NetworkRepresentation } from './networkWriter.js';

/**
 * The head but its token, whose place is last: the serializer writes optional fields (`aggregate`)
 * after required ones, and the head's order is from, to, aggregate, syncToken.
 */
const serializeInterval = compileSerializer(NetworkHead.omit({ syncToken: true }));

/** What ends one element before the next begins: the series' own close, then a comma. */
const BETWEEN_SERIES = Buffer.concat([jsonSeries.close(), Buffer.from(',')]);
const CLOSING = Buffer.from(']}');

/** A fresh one per response: it knows whether a series has begun, which then needs its close. */
export function jsonNetwork(): NetworkRepresentation {
  let seriesBegun = false;
  return {
    mediaType: jsonSeries.mediaType,
    open: ({ syncToken, ...interval }) =>
      Buffer.from(
        `${serializeInterval(interval).slice(0, -1)},"syncToken":${JSON.stringify(syncToken)},"series":[`,
      ),
    head(head) {
      const series = jsonSeries.head(head);
      if (!seriesBegun) {
        seriesBegun = true;
        return series;
      }
      return Buffer.concat([BETWEEN_SERIES, series]);
    },
    batch: jsonSeries.batch,
    close: () => (seriesBegun ? Buffer.concat([jsonSeries.close(), CLOSING]) : CLOSING),
  };
}
