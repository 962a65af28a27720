/**
 * The GeoJSON writer of a page of features (src/engine/write/featurePage.ts): each row a Feature with
 * its `{tube}:{observedAt}` id, its tube's geometry (or null) and flat properties, as JSON.parse reads
 * it; at most `limit` features across batches, the row after them only telling that more follow; and
 * the members after `features` given the page's true end.
 */
import t from 'tap';
import { emptyBatch, type MeasurementBatch } from '../../src/engine/batch.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { featurePageWriter, type PageEnd } from '../../src/engine/write/featurePage.js';
import { instantText } from '../../src/engine/write/text.js';
import type { LatestTube } from '../../src/engine/write/writer.js';

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
