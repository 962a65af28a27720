/**
 * A page of GeoJSON features, one per measurement (RFC 7946; the items of OGC API - Features): one
 * FeatureCollection whose features are written from a batch's numbers as the series writes them
 * (text.ts), each between the constant pieces of its tube, made once per list of tubes. Rows of many
 * tubes come in each batch, as in latest. The page holds `limit` features at most: a row after them,
 * which the select reads for that purpose, only tells that more follow. What comes after `features`
 * (counts, links) is the caller's, written with the close, once the page's end is known.
 */
import type { MeasurementBatch } from '../batch.js';
import { RecycledChunks } from './recycledChunks.js';
import { AsciiWriter, numberText } from './text.js';
import { type LatestTube, type LatestWriter, madeOncePerList } from './writer.js';

/** Where a page ended. */
export interface PageEnd {
  /** Features written. */
  returned: number;
  /** The last one's tube (its position in the opening's list) and time (µs since 1970); none for none. */
  last: { tube: number; observedAt: number } | undefined;
  /** Whether a row followed the last feature. */
  more: boolean;
}

export interface FeaturePageOptions {
  limit: number;
  /** Every geometry `null`, no coordinates written. */
  skipGeometry: boolean;
  /** The names of the status codes (STATUSES): every feature has its status. */
  statuses: readonly string[];
  /** The members after `features`, comma-separated, without braces: `"numberMatched":…,"links":[…]`. */
  members(end: PageEnd): string;
}

/** A tube's pieces: before the id's instant, between it and the property's instant, after the row's status. */
interface TubePieces {
  id: Buffer;
  properties: Buffer;
  after: Buffer;
}

const OPENING = Buffer.from('{"type":"FeatureCollection","features":[');
const VALUE = Buffer.from('","value":');
const COMMA = Buffer.from(',');

function geometry(location: LatestTube['location']): string {
  if (!location) return 'null';
  return `{"type":"Point","coordinates":[${numberText(location[0])},${numberText(location[1])}]}`;
}

function piecesOf(tube: LatestTube, skipGeometry: boolean): TubePieces {
  const identifier = JSON.stringify(tube.tubeIdentifier);
  return {
    id: Buffer.from(`{"type":"Feature","id":${identifier.slice(0, -1)}:`),
    properties: Buffer.from(
      `","geometry":${skipGeometry ? 'null' : geometry(tube.location)},"properties":{"tubeIdentifier":${identifier},"observedAt":"`,
    ),
    after: Buffer.from(
      `,"unit":${JSON.stringify(tube.unit)},"verticalDatum":${JSON.stringify(tube.verticalDatum)}}}`,
    ),
  };
}

/** Each list's pieces, with geometry and without, each tube's made when a page first writes it. */
const made = [
  new WeakMap<readonly LatestTube[], (TubePieces | undefined)[]>(),
  new WeakMap<readonly LatestTube[], (TubePieces | undefined)[]>(),
];

const writer = new AsciiWriter();

/** A fresh one per page: it counts the features it wrote. */
export function featurePageWriter({
  limit,
  skipGeometry,
  statuses,
  members,
}: FeaturePageOptions): LatestWriter {
  const fields = statuses.map((status) => Buffer.from(`,"status":${JSON.stringify(status)}`));
  const fieldBytes = Math.max(...fields.map((field) => field.length));
  let tubes: readonly LatestTube[] = [];
  let pieces: (TubePieces | undefined)[] = [];
  let returned = 0;
  let last: PageEnd['last'];
  let more = false;
  // A page's chunks are five times the series' bytes for the same rows: their memory is reused.
  const chunks = new RecycledChunks();
  return {
    open(list) {
      tubes = list;
      pieces = madeOncePerList(made[skipGeometry ? 1 : 0]!, list, () => new Array(list.length));
      return OPENING;
    },
    batch(batch: MeasurementBatch) {
      const { tube, observedAt, value, status } = batch;
      if (!status) throw new Error('a batch without the status its writer writes');
      const length = Math.min(batch.length, limit - returned);
      if (length < batch.length) more = true;
      for (let i = 0; i < length; i++) {
        const position = tube[i]!;
        let made = pieces[position];
        if (made === undefined) {
          made = piecesOf(tubes[position]!, skipGeometry);
          pieces[position] = made;
        }
        const { id, properties, after } = made;
        writer.reserve(
          1 + id.length + 2 * 27 + properties.length + VALUE.length + 25 + fieldBytes + after.length,
        );
        if (returned + i > 0) writer.bytes(COMMA);
        writer.bytes(id);
        writer.instant(observedAt[i]!);
        writer.bytes(properties);
        writer.instant(observedAt[i]!);
        writer.bytes(VALUE);
        writer.number(value[i]!);
        writer.bytes(fields[status[i]!]!);
        writer.bytes(after);
      }
      if (length > 0) last = { tube: tube[length - 1]!, observedAt: observedAt[length - 1]! };
      returned += length;
      return writer.take(chunks);
    },
    close: () => Buffer.from(`],${members({ returned, last, more })}}`),
    wholeOnlyWithClose: true,
    recycle: (chunk) => chunks.recycle(chunk),
  };
}
