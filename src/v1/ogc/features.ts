/**
 * The features of the three collections, a page at a time, read in one snapshot: the tubes of the key's
 * view in discovery's order (kept: keyViews.ts), then what each collection holds of them. A page starts
 * after the last feature's key (keyset), never at an offset, so page 100 costs what page 1 costs and a
 * page never repeats or skips a feature that existed when the first was read.
 */
import type { Queryable } from '../../db/connect.js';
import {
  compareInstants,
  dayStart,
  earlierOf,
  formatInstant,
  type Instant,
  laterOf,
  nextDay,
  nextMicro,
  parseDateTime,
} from '../../domain/datetime.js';
import { compileSerializer } from '../../domain/jsonSchema.js';
import { naturalCompare } from '../../domain/naturalOrder.js';
import { statusSetOf } from '../../engine/read/dayRollups.js';
import {
  instantLiteral,
  int4ArrayLiteral,
  integerLiteral,
  statusCondition,
} from '../../engine/read/literals.js';
import { measurementValue } from '../../engine/read/measurementValue.js';
import { acrossTubes, oneAfterAnother } from '../../engine/read/selects.js';
import { canonicalTubeIdentifier, STATUSES, statusCode } from '../../engine/schemas.js';
import { numberText } from '../../engine/write/text.js';
import type { BudgetCache } from '../../http/budgetCache.js';
import { containsLocation } from '../bbox.js';
import type { TubeInView } from '../tubesInView.js';
import type { ItemsQuery, Period } from './query.js';
import { PROPERTIES } from './schemas.js';

type Properties = Record<string, string | number | null>;

export interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] } | null;
  properties: Properties;
}

/** Where a page ends: the last feature's tube (well name, number, identifier) and, for a measurement, its time. */
export type Position = [string, string, string] | [string, string, string, number, number];

export interface Page {
  /** The features' JSON, comma-separated. */
  features: Buffer;
  returned: number;
  numberMatched: number;
  /** Where the next page starts, when more features follow. */
  next: Position | undefined;
}

export const geometryOf = (tube: TubeInView): Feature['geometry'] =>
  tube.longitude === null || tube.latitude === null
    ? null
    : { type: 'Point', coordinates: [tube.longitude, tube.latitude] };

const feature = (id: string, tube: TubeInView, properties: Properties): Feature => ({
  type: 'Feature',
  id,
  geometry: geometryOf(tube),
  properties,
});

export const tubeFeature = (tube: TubeInView): Feature =>
  feature(tube.identifier, tube, {
    tubeIdentifier: tube.identifier,
    wellName: tube.wellName,
    tubeNumber: tube.number,
    unit: tube.unit,
    verticalDatum: tube.verticalDatum,
    groundLevel: tube.groundLevel,
    tubeTop: tube.tubeTop,
    screenTop: tube.screenTop,
    screenBottom: tube.screenBottom,
  });

/** A measurement's row as read: its time as whole epoch seconds and microseconds. */
interface MeasurementRow {
  tubeId: number;
  seconds: number;
  micros: number;
  value: number;
  status: number;
}

const rowInstant = (row: MeasurementRow): Instant => ({ seconds: row.seconds, micros: row.micros });

export const latestFeature = (tube: TubeInView, row: MeasurementRow): Feature =>
  feature(tube.identifier, tube, {
    tubeIdentifier: tube.identifier,
    wellName: tube.wellName,
    tubeNumber: tube.number,
    observedAt: formatInstant(rowInstant(row)),
    value: row.value,
    status: STATUSES[row.status]!,
    unit: tube.unit,
    verticalDatum: tube.verticalDatum,
  });

export function measurementFeature(tube: TubeInView, row: MeasurementRow): Feature {
  const observedAt = formatInstant(rowInstant(row));
  return feature(`${tube.identifier}:${observedAt}`, tube, {
    tubeIdentifier: tube.identifier,
    observedAt,
    value: row.value,
    status: STATUSES[row.status]!,
    unit: tube.unit,
    verticalDatum: tube.verticalDatum,
  });
}

/** The columns of a MeasurementRow, from a table whose row's value is `value` (an expression). */
const rowColumns = (value: string) => `tube_id as "tubeId",
  floor(extract(epoch from observed_at))::float8 as seconds,
  (extract(microseconds from observed_at)::int8 % 1000000)::int4 as micros,
  ${value} as value, status::int4 as status`;

/** The status codes a query passes, undefined for every status. */
const codesOf = (status: readonly string[] | undefined) =>
  status?.map((name) => statusCode(name as (typeof STATUSES)[number]));

/** The tubes a query may show: of the key's view, the listed ones (the others are simply not there), in the box. */
export function queriedTubes(view: readonly TubeInView[], query: ItemsQuery): readonly TubeInView[] {
  const listed = query.tubeIdentifier && new Set(query.tubeIdentifier.map(canonicalTubeIdentifier));
  const { bbox } = query;
  if (listed === undefined && bbox === undefined) return view;
  return view.filter(
    (tube) =>
      (listed === undefined || listed.has(tube.identifier)) &&
      (bbox === undefined || containsLocation(bbox, tube.longitude, tube.latitude)),
  );
}

const serializeTubeProperties = compileSerializer(PROPERTIES.tubes);
const serializeLatestProperties = compileSerializer(PROPERTIES.latest);

/** What every feature of a tube starts with, up to its properties: with its geometry, and without. */
interface TubeText {
  head: string;
  headWithoutGeometry: string;
  /** The properties of its feature of `tubes`. */
  tubeProperties: string;
}

/**
 * Made once per tube of a kept view (keyViews.ts), so a page of a view read before writes only what
 * moves with the measurements.
 */
const tubeTexts = new WeakMap<TubeInView, TubeText>();

function textOf(tube: TubeInView): TubeText {
  let text = tubeTexts.get(tube);
  if (text === undefined) {
    const geometry =
      tube.longitude === null || tube.latitude === null
        ? 'null'
        : `{"type":"Point","coordinates":[${numberText(tube.longitude)},${numberText(tube.latitude)}]}`;
    const id = `{"type":"Feature","id":${JSON.stringify(tube.identifier)},"geometry":`;
    text = {
      head: `${id}${geometry},"properties":`,
      headWithoutGeometry: `${id}null,"properties":`,
      tubeProperties: serializeTubeProperties(tubeFeature(tube).properties),
    };
    tubeTexts.set(tube, text);
  }
  return text;
}

const headOf = (tube: TubeInView, skipGeometry: boolean | undefined) =>
  skipGeometry ? textOf(tube).headWithoutGeometry : textOf(tube).head;

/** The index of the first tube after `position` in discovery's order (the tube itself, if it is still there). */
function resumeAt(
  tubes: readonly TubeInView[],
  position: Position | undefined,
): { index: number; same: boolean } {
  if (position === undefined) return { index: 0, same: false };
  const [wellName, number, identifier] = position;
  const index = tubes.findIndex((tube) => tube.identifier === identifier);
  if (index !== -1) return { index, same: true };
  const after = tubes.findIndex(
    (tube) => (naturalCompare(tube.wellName, wellName) || naturalCompare(tube.number, number)) > 0,
  );
  return { index: after === -1 ? tubes.length : after, same: false };
}

const positionOf = (tube: TubeInView): [string, string, string] => [
  tube.wellName,
  tube.number,
  tube.identifier,
];

/** A page of a list of features, one per tube, in the tubes' order: only the page's are written. */
function pageOf<E extends { tube: TubeInView }>(
  entries: readonly E[],
  position: Position | undefined,
  limit: number,
  write: (entry: E) => string,
): Page {
  const { start, end } = rangeOf(
    entries.map(({ tube }) => tube),
    position,
    limit,
  );
  const page = entries.slice(start, end);
  return {
    features: Buffer.from(page.map(write).join(',')),
    returned: page.length,
    numberMatched: entries.length,
    next: end < entries.length ? positionOf(page.at(-1)!.tube) : undefined,
  };
}

/** The features a page of `limit` after `position` holds: from `start` to `end` (exclusive). */
function rangeOf(tubes: readonly TubeInView[], position: Position | undefined, limit: number) {
  const { index, same } = resumeAt(tubes, position);
  const start = same ? index + 1 : index;
  return { start, end: Math.min(tubes.length, start + limit) };
}

/** Each tube's latest measurement among the statuses that pass (latest_measurements, sql/009), by tube id. */
async function latestRows(
  tx: Queryable,
  tubes: readonly TubeInView[],
  status: readonly string[] | undefined,
): Promise<Map<number, MeasurementRow>> {
  const codes = codesOf(status);
  const rows = await tx.unsafe<MeasurementRow[]>(
    `select distinct on (tube_id) ${rowColumns('value')}
     from latest_measurements where tube_id = any($1::int4[]) ${codes ? 'and status = any($2::int2[])' : ''}
     order by tube_id, observed_at desc`,
    codes ? [tubes.map((tube) => tube.id), codes] : [tubes.map((tube) => tube.id)],
  );
  return new Map(rows.map((row) => [row.tubeId, row]));
}

const inPeriod = (instant: Instant, period: Period | undefined) =>
  period === undefined ||
  ((period.from === undefined || compareInstants(instant, period.from) >= 0) &&
    (period.to === undefined || compareInstants(instant, period.to) <= 0));

/** A tube's feature of `tubes`. */
const tubeText = (tube: TubeInView, skipGeometry: boolean | undefined) =>
  `${headOf(tube, skipGeometry)}${textOf(tube).tubeProperties}}`;

/** Features written once, each followed by a comma, and where each begins (then the end). */
export interface WrittenFeatures {
  bytes: Buffer;
  starts: number[];
}

function written(texts: readonly string[]): WrittenFeatures {
  const parts = texts.map((text) => Buffer.from(`${text},`));
  const starts: number[] = [];
  let at = 0;
  for (const part of parts) {
    starts.push(at);
    at += part.length;
  }
  starts.push(at);
  return { bytes: Buffer.concat(parts), starts };
}

/** The page of `limit` after `position` of features written once for `tubes` (one each, in their order). */
function partOf(
  { bytes, starts }: WrittenFeatures,
  tubes: readonly TubeInView[],
  position: Position | undefined,
  limit: number,
): Page {
  const { start, end } = rangeOf(tubes, position, limit);
  return {
    // Without the comma after the last.
    features: bytes.subarray(starts[start]!, Math.max(starts[start]!, starts[end]! - 1)),
    returned: end - start,
    numberMatched: tubes.length,
    next: end < tubes.length ? positionOf(tubes[end - 1]!) : undefined,
  };
}

/** Made once per kept view (keyViews.ts) and geometry choice: a page of it is then a part of its bytes. */
const writtenViews = [
  new WeakMap<readonly TubeInView[], WrittenFeatures>(),
  new WeakMap<readonly TubeInView[], WrittenFeatures>(),
];

function writtenView(view: readonly TubeInView[], skipGeometry: boolean | undefined): WrittenFeatures {
  const made = writtenViews[skipGeometry ? 1 : 0]!;
  let features = made.get(view);
  if (features === undefined) {
    features = written(view.map((tube) => tubeText(tube, skipGeometry)));
    made.set(view, features);
  }
  return features;
}

/**
 * A page of `tubes`. Of a whole kept view (`kept`), a part of the view's bytes, written once; of a
 * filtered one, its features written now.
 */
export function tubesPage(
  tubes: readonly TubeInView[],
  query: ItemsQuery,
  position: Position | undefined,
  limit: number,
  kept: boolean,
): Page {
  if (!kept)
    return pageOf(
      tubes.map((tube) => ({ tube })),
      position,
      limit,
      ({ tube }) => tubeText(tube, query.skipGeometry),
    );
  return partOf(writtenView(tubes, query.skipGeometry), tubes, position, limit);
}

/** Each of `tubes` with its latest measurement in the period, if it has one. */
export async function latestRowsOf(
  tx: Queryable,
  tubes: readonly TubeInView[],
  query: Pick<ItemsQuery, 'status' | 'datetime'>,
): Promise<{ tube: TubeInView; row: MeasurementRow }[]> {
  const rows = await latestRows(tx, tubes, query.status);
  return tubes.flatMap((tube) => {
    const row = rows.get(tube.id);
    return row && inPeriod(rowInstant(row), query.datetime) ? [{ tube, row }] : [];
  });
}

/** The latest features of a whole view, written once per snapshot: the tubes they are of, in order. */
export interface WrittenLatest extends WrittenFeatures {
  tubes: TubeInView[];
}

/**
 * A page of `latest`. With `keeping` (a whole view, no period), a part of its features as written
 * once for the snapshot, kept under `keeping.key`; otherwise written now.
 */
export async function latestPage(
  tx: Queryable,
  tubes: readonly TubeInView[],
  query: ItemsQuery,
  position: Position | undefined,
  limit: number,
  keeping?: { kept: BudgetCache<WrittenLatest>; key: string },
): Promise<Page> {
  const text = ({ tube, row }: { tube: TubeInView; row: MeasurementRow }) =>
    `${headOf(tube, query.skipGeometry)}${serializeLatestProperties(latestFeature(tube, row).properties)}}`;
  if (!keeping) return pageOf(await latestRowsOf(tx, tubes, query), position, limit, text);
  let features = keeping.kept.get(keeping.key);
  if (features === undefined) {
    const entries = await latestRowsOf(tx, tubes, query);
    features = { ...written(entries.map(text)), tubes: entries.map(({ tube }) => tube) };
    keeping.kept.set(keeping.key, features, features.bytes.length);
  }
  return partOf(features, features.tubes, position, limit);
}

/**
 * The whole UTC days of a period [from, end), either side open: from the first midnight at or after
 * `from` to the last at or before `end`.
 */
function wholeDaysOf(from: Instant | undefined, end: Instant | undefined) {
  const first = from && (compareInstants(from, dayStart(from)) === 0 ? from : nextDay(from));
  return { first, end: end && dayStart(end) };
}
const literal = (instant: Instant) => instantLiteral(formatInstant(instant));

/**
 * The select of how many measurements of `tubeIds` pass the query, without reading them: the daily
 * rollups (sql/011) hold each day's count per set of statuses, and only the measurements of the
 * period's first and last day, where it cuts a day, are counted one by one, between literal bounds (so
 * the planner opens only those days' chunks, decisions/0114).
 */
export function measurementsMatchedSelect(
  tubeIds: readonly number[],
  query: Pick<ItemsQuery, 'status' | 'datetime'>,
): string {
  const codes = codesOf(query.status);
  const mask = statusSetOf(codes);
  const passes = statusCondition(codes, STATUSES.length);
  const ids = int4ArrayLiteral(tubeIds);
  // The period as [first, end): `datetime` includes both ends. Its whole days: [firstDay, endDay).
  const first = query.datetime?.from;
  const end = query.datetime?.to && nextMicro(query.datetime.to);
  const { first: firstDay, end: endDay } = wholeDaysOf(first, end);
  const counted = (from: Instant, to: Instant) =>
    compareInstants(from, to) >= 0
      ? []
      : [
          `(select count(*)::float8 from measurements where tube_id = any(${ids})
              ${passes ? `and ${passes}` : ''} and observed_at >= ${literal(from)} and observed_at < ${literal(to)})`,
        ];
  const parts = [
    `(select coalesce(sum(r.count), 0)::float8 from measurement_day_rollups r
       where r.tube_id = any(${ids}) and r.statuses = (r.present & ${integerLiteral(mask)})
         ${firstDay ? `and r.day >= ${literal(firstDay)}` : ''} ${endDay ? `and r.day < ${literal(endDay)}` : ''})`,
    ...(first && firstDay ? counted(first, end ? earlierOf(firstDay, end) : firstDay) : []),
    ...(end && endDay ? counted(firstDay ? laterOf(endDay, firstDay) : endDay, end) : []),
  ];
  return `select ${parts.join(' + ')} as matched`;
}

/** How many measurements of `tubes` pass the query (measurementsMatchedSelect). */
export async function measurementsMatched(
  tx: Queryable,
  tubes: readonly TubeInView[],
  query: Pick<ItemsQuery, 'status' | 'datetime'>,
): Promise<number> {
  const select = measurementsMatchedSelect(
    tubes.map((tube) => tube.id),
    query,
  );
  const [row] = await tx.unsafe<{ matched: number }[]>(select);
  return row!.matched;
}

/** A tube a page of measurements reads, and the bounds of its rows: [from, to). */
export interface PagePart {
  /** The tube's index in the page's list. */
  index: number;
  from: Instant;
  to: Instant;
}

/** How many tubes a page's parts are looked for in before the page reads its tubes unbounded. */
const PARTS_LOOKED_AT = 31;

/**
 * The tubes a page of `limit` features from `start` (after `after`) reads, each bounded by what its
 * rollups (sql/011) say in the snapshot: from its first day with a row to its last, and the page's last
 * tube to the end of the day by which the page surely holds `limit + 1` rows that pass (counted from
 * whole days only, so never more than the rows). Tubes without a row are left out. Undefined when
 * the page goes on past PARTS_LOOKED_AT tubes: it then reads them unbounded. Tubes are looked at in
 * groups of 1, 2, 4, …, each group's statements pipelined; a group's later tubes are asked for the rows
 * the page needed before the group, so their end may come late, never early.
 */
export async function measurementsPageParts(
  tx: Queryable,
  tubes: readonly TubeInView[],
  start: number,
  after: Instant | undefined,
  query: Pick<ItemsQuery, 'status' | 'datetime'>,
  limit: number,
): Promise<PagePart[] | undefined> {
  const mask = statusSetOf(codesOf(query.status));
  const { from: periodFrom, to } = query.datetime ?? {};
  const end = to && nextMicro(to);
  const resumed = after && nextMicro(after);
  const first = resumed && periodFrom ? laterOf(resumed, periodFrom) : (resumed ?? periodFrom);
  const lowerOf = (i: number) => (i === start ? first : periodFrom);
  const parts: PagePart[] = [];
  let need = limit + 1;
  for (let index = start, group = 1; index < tubes.length; index += group, group *= 2) {
    if (index - start >= PARTS_LOOKED_AT) return undefined;
    const indexes = tubes.slice(index, index + group).map((_, k) => index + k);
    const extents = await Promise.all(
      indexes.map((i) => tubeExtent(tx, tubes[i]!.id, mask, lowerOf(i), end, need)),
    );
    for (const [k, { first: firstDay, last: lastDay, counted, filled }] of extents.entries()) {
      if (firstDay === undefined || lastDay === undefined) continue;
      const i = indexes[k]!;
      const lower = lowerOf(i);
      // A group's later tube may fill the page without a day found for it (it was asked for more rows):
      // it is then read to its last day.
      const full = counted >= need;
      const last = full && filled ? filled : lastDay;
      parts.push({
        index: i,
        from: lower ? laterOf(lower, firstDay) : firstDay,
        to: end ? earlierOf(end, nextDay(last)) : nextDay(last),
      });
      if (full) return parts;
      need -= counted;
    }
  }
  return parts;
}

interface TubeExtent {
  /** The first and last day that hold a row. */
  first: Instant | undefined;
  last: Instant | undefined;
  /** The rows that pass in whole days; `need` when a day fills it. */
  counted: number;
  /** The first whole day by which `need` rows pass, if any. */
  filled: Instant | undefined;
}

/** A day has a rollup for each non-empty subset of its statuses (sql/011). */
const ROLLUPS_A_DAY = (1 << STATUSES.length) - 1;

/** TUBE_EXTENT's rollups of the days of the tube's rows. */
const HOLDS = 'r.tube_id = $1::int4 and r.day >= $3::timestamptz and r.day < $4::timestamptz';

/**
 * What a tube's rollups say of its rows: $1 the tube, $2 the statuses that pass, [$3, $4) the days of
 * its rows, [$5, $6) its whole days, $7 the rows the page needs. Prepared: the rollups are no hypertable,
 * so their bounds may be parameters. The first and last day with any row, one step of the key each,
 * bound those that pass. The rollup of the subset that passes counts a day's rows; the days are read in
 * the key's order, and the scan stops at the day that fills the page (each counted rollup holds a row,
 * so ROLLUPS_A_DAY × $7 rollups always reach it). Every day is counted only when none fills it.
 */
const TUBE_EXTENT = `
  with whole as (
    select r.day, r.count, sum(r.count) over (order by r.day)::float8 as rows
    from (select r.day, r.count, r.statuses, r.present from measurement_day_rollups r
          where r.tube_id = $1::int4 and r.day >= $5::timestamptz and r.day < $6::timestamptz
          order by r.day, r.statuses limit ${ROLLUPS_A_DAY} * $7::int8) r
    where r.statuses = (r.present & $2::int2))
  select (select extract(epoch from r.day)::float8 from measurement_day_rollups r where ${HOLDS}
          order by r.day limit 1) as first,
         (select extract(epoch from r.day)::float8 from measurement_day_rollups r where ${HOLDS}
          order by r.day desc limit 1) as last,
         filled,
         case when filled is null then (select coalesce(max(rows), 0) from whole) else $7::float8 end as counted
  from (select (select extract(epoch from day)::float8 from whole
                where rows >= $7::int8 and rows - count < $7::int8 limit 1) as filled) f`;

/** What a tube's rollups say of its rows that pass `mask` in [lower, end), either side open. */
async function tubeExtent(
  tx: Queryable,
  tubeId: number,
  mask: number,
  lower: Instant | undefined,
  end: Instant | undefined,
  need: number,
): Promise<TubeExtent> {
  const whole = wholeDaysOf(lower, end);
  const text = (instant: Instant | undefined, open: string) => (instant ? formatInstant(instant) : open);
  const [row] = await tx.unsafe<(Record<'first' | 'last' | 'filled', number | null> & { counted: number })[]>(
    TUBE_EXTENT,
    [
      tubeId,
      mask,
      text(lower && dayStart(lower), '-infinity'),
      text(end, 'infinity'),
      text(whole.first, '-infinity'),
      text(whole.end, 'infinity'),
      need,
    ],
    { prepare: true },
  );
  const day = (seconds: number | null) => (seconds === null ? undefined : { seconds, micros: 0 });
  return { first: day(row!.first), last: day(row!.last), counted: row!.counted, filled: day(row!.filled) };
}

/**
 * The select of a page of measurements, as the document engine reads it: `tubes` in discovery's order
 * from the page's first one (`start`), each in time order from `after` for that first one, one row more
 * than `limit` (whether another page follows). Each row's `tube` is its tube's position in `tubes`.
 * With `parts` (measurementsPageParts), each part's tube between its bounds, one after another, so the
 * planner opens only their chunks. Without, every tube from `start`, unbounded: one by the series' own
 * select, more by the network's many-tube select (acrossTubes), each tube by its primary key, the keyset
 * bound an index condition, stopped by the limit once the page is read.
 */
export function measurementsPageSelect(
  tubes: readonly TubeInView[],
  start: number,
  after: Instant | undefined,
  query: Pick<ItemsQuery, 'status' | 'datetime'>,
  limit: number,
  parts?: readonly PagePart[],
): string {
  const passes = statusCondition(codesOf(query.status), STATUSES.length);
  const perTube = (id: string, position: string, bounds: (string | undefined)[]) =>
    `select (${position})::int4 as tube, observed_at, ${measurementValue()} as value, status
    from measurements where tube_id = ${id} ${[passes, ...bounds]
      .filter((condition) => condition)
      .map((condition) => `and ${condition}`)
      .join(' ')}
    order by observed_at`;
  const bounded = (part: PagePart) =>
    perTube(integerLiteral(tubes[part.index]!.id), integerLiteral(part.index), [
      `observed_at >= ${literal(part.from)}`,
      `observed_at < ${literal(part.to)}`,
    ]);
  const rows = () => {
    if (parts?.length === 0) return perTube('0', integerLiteral(start), ['false']);
    if (parts) return parts.length === 1 ? bounded(parts[0]!) : oneAfterAnother(parts.map(bounded));
    const ids = tubes.slice(start).map((tube) => tube.id);
    const one = ids.length === 1;
    const { from, to } = query.datetime ?? {};
    const afterLiteral = after && literal(after);
    const bounds = [
      from && `observed_at >= ${literal(from)}`,
      to && `observed_at <= ${literal(to)}`,
      afterLiteral &&
        (one
          ? `observed_at > ${afterLiteral}`
          : `observed_at > case when listed.position = 1 then ${afterLiteral} else '-infinity'::timestamptz end`),
    ];
    return one
      ? perTube(integerLiteral(ids[0]!), integerLiteral(start), bounds)
      : acrossTubes(ids, perTube('listed.id', `listed.position - 1 + ${integerLiteral(start)}`, bounds));
  };
  return `${rows()} limit ${integerLiteral(limit + 1)}`;
}

/** Where a page of measurements starts: the index of its first tube in `tubes`, and after which time of it. */
export function measurementsStart(
  tubes: readonly TubeInView[],
  position: Position | undefined,
): { start: number; after: Instant | undefined } {
  const { index, same } = resumeAt(tubes, position);
  return {
    start: index,
    after: same && position!.length === 5 ? { seconds: position![3], micros: position![4] } : undefined,
  };
}

/** The key of a measurement's feature: its tube's and its time. */
export const measurementPosition = (tube: TubeInView, { seconds, micros }: Instant): Position => [
  ...positionOf(tube),
  seconds,
  micros,
];

/** The measurement of `tube` at `observedAt` (as its feature id gives it), if there is one. */
export async function measurementAt(
  tx: Queryable,
  tube: TubeInView,
  observedAt: string,
): Promise<Feature | undefined> {
  const parsed = parseDateTime(observedAt);
  if (!parsed.ok) return undefined;
  const [row] = await tx.unsafe<MeasurementRow[]>(
    `select ${rowColumns(measurementValue())} from measurements where tube_id = $1::int4 and observed_at = $2::timestamptz`,
    [tube.id, formatInstant(parsed.instant)],
  );
  return row === undefined ? undefined : measurementFeature(tube, row);
}
