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

/**
 * A tube's pieces: before the id's instant, between it and the property's (the same instant, written
 * once and copied), and, by status code, what follows the value.
 */
interface TubePieces {
  id: Buffer;
  properties: Buffer;
  ends: Buffer[];
  /** By the status code of a feature of the tube: its end, then the start of the tube's next feature. */
  endThenStart: Buffer[];
  /** The most bytes a feature of the tube takes, its leading comma included. */
  most: number;
}

const OPENING_TEXT = '{"type":"FeatureCollection","features":[';
const OPENING = Buffer.from(OPENING_TEXT);
const NOTHING = Buffer.alloc(0);
const VALUE = Buffer.from('","value":');
const COMMA = Buffer.from(',');
/** Bytes an instant (instantText) and a number (numberText) take at most. */
const INSTANT_BYTES = 27;
const NUMBER_BYTES = 25;
/** Memory of sent chunks kept for later pages at most: a few pages' worth in flight. */
const KEPT_CHUNK_BYTES = 8 * 1024 * 1024;

function geometry(location: LatestTube['location']): string {
  if (!location) return 'null';
  return `{"type":"Point","coordinates":[${numberText(location[0])},${numberText(location[1])}]}`;
}

function piecesOf(tube: LatestTube, skipGeometry: boolean, statuses: readonly string[]): TubePieces {
  const identifier = JSON.stringify(tube.tubeIdentifier);
  const id = Buffer.from(`{"type":"Feature","id":${identifier.slice(0, -1)}:`);
  const properties = Buffer.from(
    `","geometry":${skipGeometry ? 'null' : geometry(tube.location)},"properties":{"tubeIdentifier":${identifier},"observedAt":"`,
  );
  const after = `,"unit":${JSON.stringify(tube.unit)},"verticalDatum":${JSON.stringify(tube.verticalDatum)}}}`;
  const ends = statuses.map((status) => Buffer.from(`,"status":${JSON.stringify(status)}${after}`));
  const most =
    1 +
    id.length +
    INSTANT_BYTES +
    properties.length +
    INSTANT_BYTES +
    VALUE.length +
    NUMBER_BYTES +
    Math.max(...ends.map((end) => end.length));
  const endThenStart = ends.map((end) => Buffer.concat([end, COMMA, id]));
  return { id, properties, ends, endThenStart, most };
}

/**
 * Each list's pieces, per list of status names, with geometry and without; each tube's made when a
 * page first writes it.
 */
const made = new WeakMap<readonly string[], WeakMap<readonly LatestTube[], (TubePieces | undefined)[]>[]>();

function madeFor(statuses: readonly string[], skipGeometry: boolean) {
  let both = made.get(statuses);
  if (both === undefined) {
    both = [new WeakMap(), new WeakMap()];
    made.set(statuses, both);
  }
  return both[skipGeometry ? 1 : 0]!;
}

const writer = new AsciiWriter();
/**
 * The memory of every page's chunks, shared: a page's chunks are five times the series' bytes for the
 * same rows, and a page then starts in memory that earlier pages' sockets sent.
 */
const chunks = new RecycledChunks(KEPT_CHUNK_BYTES);

/** A fresh one per page: it counts the features it wrote. */
export function featurePageWriter({
  limit,
  skipGeometry,
  statuses,
  members,
}: FeaturePageOptions): LatestWriter {
  let tubes: readonly LatestTube[] = [];
  let pieces: (TubePieces | undefined)[] = [];
  let returned = 0;
  let last: PageEnd['last'];
  let more = false;
  /** Whether the collection's opening is written: by the first batch, or else by the close. */
  let opened = false;
  return {
    // The opening comes with the first batch, so that the first chunk is one of the writer's, whose
    // memory is given back, rather than a copy of the two.
    open(list) {
      tubes = list;
      pieces = madeOncePerList(madeFor(statuses, skipGeometry), list, () => new Array(list.length));
      return NOTHING;
    },
    batch(batch: MeasurementBatch) {
      const { tube, observedAt, value, status } = batch;
      if (!status) throw new Error('a batch without the status its writer writes');
      if (!opened) {
        writer.reserve(OPENING.length);
        writer.bytes(OPENING);
        opened = true;
      }
      const length = Math.min(batch.length, limit - returned);
      if (length < batch.length) more = true;
      // The end of the feature before: written with the start of the next when it is of the same tube.
      let ending: Buffer | undefined;
      for (let i = 0; i < length; i++) {
        const position = tube[i]!;
        let made = pieces[position];
        if (made === undefined) {
          made = piecesOf(tubes[position]!, skipGeometry, statuses);
          pieces[position] = made;
        }
        writer.reserve(made.most + (ending?.length ?? 0));
        if (i > 0 && position === tube[i - 1]) writer.bytes(made.endThenStart[status[i - 1]!]!);
        else {
          if (ending) writer.bytes(ending);
          if (returned + i > 0) writer.bytes(COMMA);
          writer.bytes(made.id);
        }
        const instantStart = writer.written;
        writer.instant(observedAt[i]!);
        const instantEnd = writer.written;
        writer.bytes(made.properties);
        writer.again(instantStart, instantEnd);
        writer.bytes(VALUE);
        writer.number(value[i]!);
        ending = made.ends[status[i]!]!;
      }
      if (ending) writer.bytes(ending);
      if (length > 0) last = { tube: tube[length - 1]!, observedAt: observedAt[length - 1]! };
      returned += length;
      return writer.take(chunks);
    },
    close: () => Buffer.from(`${opened ? '' : OPENING_TEXT}],${members({ returned, last, more })}}`),
    wholeOnlyWithClose: true,
    recycle: (chunk) => chunks.recycle(chunk),
  };
}
