/**
 * The GeoJSON writer of a page of features (src/engine/write/featurePage.ts): each row a Feature with
 * its `{tube}:{observedAt}` id, its tube's geometry (or null) and flat properties, as JSON.parse reads
 * it; at most `limit` features across batches, the row after them only telling that more follow; and
 * the members after `features` given the page's true end.
 */
import fc from 'fast-check';
import t from 'tap';
import { instantOfMicros } from '../../src/domain/datetime.js';
import { emptyBatch, type MeasurementBatch } from '../../src/engine/batch.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { featurePageWriter, type PageEnd } from '../../src/engine/write/featurePage.js';
import { instantText } from '../../src/engine/write/text.js';
import type { LatestTube } from '../../src/engine/write/writer.js';
import { utcText } from '../helpers/dateTimes.js';

const tubes: LatestTube[] = [
  {
    tubeIdentifier: '00000000-0000-4000-8000-000000000001',
    unit: 'm',
    verticalDatum: 'NAP',
    wellName: 'A',
    tubeNumber: '1',
    location: [5.125, 52.5],
  },
  {
    tubeIdentifier: '00000000-0000-4000-8000-000000000002',
    unit: 'cm',
    verticalDatum: 'MSL',
    wellName: 'B',
    tubeNumber: '1',
    location: undefined,
  },
];

const START = 1_704_067_200_000_000;

/** Rows `first` to `first + length - 1` of the page's rows: tube 0 for the first five, then tube 1. */
function batch(first: number, length: number): MeasurementBatch {
  const rows = emptyBatch('rawWithStatus', length);
  for (let i = 0; i < length; i++) {
    const row = first + i;
    rows.tube[i] = row < 5 ? 0 : 1;
    rows.observedAt[i] = START + row * 1_500_000;
    rows.value[i] = row / 4 - 1;
    rows.status![i] = row % 3;
  }
  rows.length = length;
  return rows;
}

function page(limit: number, skipGeometry: boolean, sizes: number[]) {
  let ended: PageEnd | undefined;
  const writer = featurePageWriter({
    limit,
    skipGeometry,
    statuses: STATUSES,
    members: (end) => {
      ended = end;
      return `"numberReturned":${end.returned}`;
    },
  });
  const parts = [writer.open(tubes)];
  let first = 0;
  for (const size of sizes) {
    parts.push(writer.batch(batch(first, size), first === 0));
    first += size;
  }
  parts.push(writer.close());
  return { body: JSON.parse(Buffer.concat(parts).toString('utf8')), end: ended! };
}

t.test('every row is a feature, across batches, when the page is not full', async (t) => {
  const { body, end } = page(10, false, [3, 4]);
  t.equal(body.type, 'FeatureCollection');
  t.equal(body.features.length, 7);
  t.same(end, { returned: 7, last: { tube: 1, observedAt: START + 6 * 1_500_000 }, more: false });
  t.equal(body.numberReturned, 7);
  const observedAt = instantText(START + 1_500_000);
  t.same(body.features[1], {
    type: 'Feature',
    id: `${tubes[0]!.tubeIdentifier}:${observedAt}`,
    geometry: { type: 'Point', coordinates: [5.125, 52.5] },
    properties: {
      tubeIdentifier: tubes[0]!.tubeIdentifier,
      observedAt,
      value: 0.25 - 1,
      status: STATUSES[1],
      unit: 'm',
      verticalDatum: 'NAP',
    },
  });
  t.equal(body.features[6].geometry, null, 'a tube without a location');
  t.equal(body.features[6].properties.unit, 'cm');
});

t.test('a page holds `limit` features; the row after them says more follow', async (t) => {
  const { body, end } = page(4, false, [3, 2]);
  t.equal(body.features.length, 4);
  t.same(end, { returned: 4, last: { tube: 0, observedAt: START + 3 * 1_500_000 }, more: true });
  const exact = page(5, false, [3, 2]);
  t.equal(exact.end.more, false, 'no row after the last: no more');
});

t.test('skipGeometry writes every geometry as null', async (t) => {
  const { body } = page(10, true, [6]);
  t.ok(body.features.every((feature: { geometry: unknown }) => feature.geometry === null));
});

t.test('an empty page is a whole collection', async (t) => {
  const { body, end } = page(10, false, []);
  t.same(body, { type: 'FeatureCollection', features: [], numberReturned: 0 });
  t.same(end, { returned: 0, last: undefined, more: false });
});

/** Tubes of every kind of piece: a location, none, text that JSON escapes, a location of -0. */
const kinds: LatestTube[] = [
  ...tubes,
  {
    tubeIdentifier: '00000000-0000-4000-8000-000000000003',
    unit: 'm "ü"',
    verticalDatum: 'NAP\\2018',
    wellName: 'C',
    tubeNumber: '2',
    location: [-0, -33.868_82],
  },
];

/** Microseconds a double holds exactly that the decoder lets through, and whole seconds and midnights. */
const LIMIT = 2 ** 53 - 1_000_000_000_000_000;
const microsArb = fc.oneof(
  fc.integer({ min: -LIMIT, max: LIMIT }),
  fc.integer({ min: -80_000, max: 80_000 }).map((day) => day * 86_400_000_000),
  fc.constantFrom(-1, 1_704_067_200_000_001, 1_704_067_200_999_999),
);
const valueArb = fc.oneof(
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -0, 0.670_999_999_999_999_9, 1e21, -1e-7, 123_456_789.123_456, 2 ** 53),
);
const rowArb = fc.record({
  tube: fc.nat({ max: kinds.length - 1 }),
  observedAt: microsArb,
  value: valueArb,
  status: fc.nat({ max: STATUSES.length - 1 }),
});

type Row = typeof rowArb extends fc.Arbitrary<infer R> ? R : never;

/** The page as JSON.stringify writes it, instants by Date's calendar (test/helpers/dateTimes.ts). */
function reference(rows: Row[], skipGeometry: boolean) {
  const features = rows.map(({ tube, observedAt, value, status }) => {
    const { tubeIdentifier, location, unit, verticalDatum } = kinds[tube]!;
    const at = utcText(instantOfMicros(observedAt));
    return {
      type: 'Feature',
      id: `${tubeIdentifier}:${at}`,
      geometry: skipGeometry || !location ? null : { type: 'Point', coordinates: [...location] },
      properties: { tubeIdentifier, observedAt: at, value, status: STATUSES[status], unit, verticalDatum },
    };
  });
  return JSON.stringify({ type: 'FeatureCollection', features, numberReturned: features.length });
}

/**
 * The page of `rows` in batches of `sizes`. A chunk sent at once (`sentAtOnce`) is copied and given
 * back, so that later chunks reuse its memory; the others are held as they are until the end, as a
 * socket holds what it has not sent.
 */
function written(rows: Row[], sizes: number[], limit: number, skipGeometry: boolean, sentAtOnce: boolean[]) {
  const writer = featurePageWriter({
    limit,
    skipGeometry,
    statuses: STATUSES,
    members: ({ returned }) => `"numberReturned":${returned}`,
  });
  const parts: Buffer[] = [writer.open(kinds)];
  let first = 0;
  for (const [i, size] of sizes.entries()) {
    const batch = emptyBatch('rawWithStatus', size);
    const rowsOfBatch = rows.slice(first, first + size);
    rowsOfBatch.forEach((row, j) => {
      batch.tube[j] = row.tube;
      batch.observedAt[j] = row.observedAt;
      batch.value[j] = row.value;
      batch.status![j] = row.status;
    });
    batch.length = rowsOfBatch.length;
    first += size;
    const chunk = writer.batch(batch, i === 0);
    if (sentAtOnce[i]) {
      parts.push(Buffer.from(chunk));
      writer.recycle!(chunk);
    } else parts.push(chunk);
  }
  parts.push(writer.close());
  return { text: Buffer.concat(parts).toString('utf8'), rows: Math.min(first, rows.length) };
}

t.test('byte for byte what JSON.stringify writes, in chunks whose memory is reused once sent', async (t) => {
  fc.assert(
    fc.property(
      fc.array(rowArb, { maxLength: 60 }),
      fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 1, max: 70 }),
      fc.boolean(),
      fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }),
      (rows, sizes, limit, skipGeometry, sentAtOnce) => {
        const page = written(rows, sizes, limit, skipGeometry, sentAtOnce);
        return page.text === reference(rows.slice(0, Math.min(page.rows, limit)), skipGeometry);
      },
    ),
    { numRuns: 3000 },
  );
  const edges: Row[] = [
    { tube: 2, observedAt: -1, value: -0, status: 0 },
    { tube: 1, observedAt: 1_704_067_200_000_001, value: 0.670_999_999_999_999_9, status: 1 },
    { tube: 0, observedAt: 1_704_067_200_999_999, value: 1e21, status: STATUSES.length - 1 },
  ];
  const page = written(edges, [2, 1], 3, false, [true, true]);
  t.equal(page.text, reference(edges, false));
  t.match(page.text, '"id":"00000000-0000-4000-8000-000000000003:1969-12-31T23:59:59.999999Z"');
  t.match(page.text, '"geometry":{"type":"Point","coordinates":[0,-33.86882]}');
  t.match(page.text, '"value":0.6709999999999999,');
});
