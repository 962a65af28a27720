/**
 * Corrections in a network delta over real HTTP: after a status change, a removal and a new value, the
 * delta with include=status as JSON, as CSV read by pandas and as Arrow read by apache-arrow and polars
 * (its status dictionary holding `removed`), all the same rows; without include=status a 410 that says
 * why; with a status filter the rows that left it as removals; an aggregated delta whose bucket is left
 * empty, a 410.
 */
import t from 'tap';
import { parseInstant } from '../../../src/domain/datetime.js';
import { DELTA_STATUSES } from '../../../src/engine/schemas.js';
import { removeMeasurements, setStatus } from '../../../src/importers/measurements/corrections.js';
import { addKey, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { rowImporter } from '../../helpers/importFixtures.js';
import { networkPath } from '../../helpers/network.js';
import { pandasMissing, pandasRows, provesStatusArrow, type StatusRow } from '../../helpers/statuses.js';

const JANUARY = { from: '2024-01-01T00:00:00Z', to: '2024-02-01T00:00:00Z' };
const between = (from: string, to: string) => ({ from: parseInstant(from), to: parseInstant(to) });

interface DeltaSeries {
  tubeIdentifier: string;
  unit: string;
  verticalDatum: string;
  measurements: { observedAt: string; value: number; status?: string }[];
}

t.test('a network delta tells corrections', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [one, two] = await addWell(sql, 'W', [{ number: '1' }, { number: '2' }]);
  const { key } = await addKey(sql, { tubeIds: [one!.id, two!.id] });
  const [A, B] = [one!.identifier, two!.identifier];
  const importRows = rowImporter(sql);
  const hours = (tube: string, day: string, values: number[]): [string, string, string][] =>
    values.map((value, hour) => [
      tube,
      `2024-01-${day}T${String(hour).padStart(2, '0')}:00:00Z`,
      String(value),
    ]);
  await importRows([...hours(A, '02', [1, 2, 3]), ...hours(A, '03', [4, 5]), ...hours(B, '02', [6, 7])]);

  const fetchNetwork = (extra: string) => get(api.base, networkPath(JANUARY, extra), { 'x-api-key': key });
  const tokenOf = async (extra: string) => {
    const response = await fetchNetwork(extra);
    t.equal(response.status, 200);
    return response.headers['sync-token'] as string;
  };
  const tokens = {
    all: await tokenOf('&include=status'),
    plain: await tokenOf(''),
    provisional: await tokenOf('&status=provisional&include=status'),
    daily: await tokenOf('&aggregate=P1D'),
  };

  t.equal(await setStatus(sql, [A], between('2024-01-02T00:00:00Z', '2024-01-02T02:00:00Z'), 'approved'), 2);
  t.equal(await removeMeasurements(sql, A, between('2024-01-03T00:00:00Z', '2024-01-04T00:00:00Z')), 2);
  await importRows([[B, '2024-01-02T01:00:00Z', '7.5']]);

  const since = (token: string, extra: string) => fetchNetwork(`${extra}&changedSince=${token}`);
  const rowsOf = (series: DeltaSeries[]): StatusRow[] =>
    series.flatMap(({ tubeIdentifier, unit, verticalDatum, measurements }) =>
      measurements.map((m) => ({ ...m, tubeIdentifier, unit, verticalDatum }) as StatusRow),
    );
  const brief = (rows: StatusRow[]) =>
    rows.map((row) => `${row.tubeIdentifier === A ? 'A' : 'B'} ${row.observedAt} ${row.value} ${row.status}`);

  const delta = await since(tokens.all, '&include=status');
  t.equal(delta.status, 200);
  const rows = rowsOf(JSON.parse(delta.body).series);
  t.same(
    brief(rows),
    [
      'A 2024-01-02T00:00:00Z 1 approved',
      'A 2024-01-02T01:00:00Z 2 approved',
      'A 2024-01-03T00:00:00Z 4 removed',
      'A 2024-01-03T01:00:00Z 5 removed',
      'B 2024-01-02T01:00:00Z 7.5 provisional',
    ],
    'the approvals, the removals with the values they had, the new value',
  );

  t.test('Arrow: apache-arrow and polars read the removals', async (t) => {
    const arrow = await since(tokens.all, '&include=status&format=arrow');
    t.equal(arrow.status, 200);
    provesStatusArrow(t, arrow.bytes!, rows, { network: true, statuses: DELTA_STATUSES });
  });

  t.test(
    'CSV: pandas reads the removals',
    { skip: pandasMissing && !process.env.CI && 'no pandas' },
    async (t) => {
      const path = networkPath(JANUARY, `&include=status&format=csv&changedSince=${tokens.all}`);
      const read = await pandasRows(`${api.base}${path}`, key);
      t.same(
        read.rows,
        rows.map((row) => [row.observedAt, row.value, row.status, row.tubeIdentifier]),
        'pandas: every row as the JSON has it',
      );
    },
  );

  t.test('without include=status: 410, saying why', async (t) => {
    const refused = await since(tokens.plain, '');
    t.equal(refused.status, 410);
    t.match(refused.headers['content-type'], 'application/problem+json');
    t.match(JSON.parse(refused.body).detail, 'include=status');
  });

  t.test('a status filter: what left it is a removal', async (t) => {
    const filtered = await since(tokens.provisional, '&status=provisional&include=status');
    t.equal(filtered.status, 200);
    t.same(brief(rowsOf(JSON.parse(filtered.body).series)), [
      'A 2024-01-02T00:00:00Z 1 removed',
      'A 2024-01-02T01:00:00Z 2 removed',
      'A 2024-01-03T00:00:00Z 4 removed',
      'A 2024-01-03T01:00:00Z 5 removed',
      'B 2024-01-02T01:00:00Z 7.5 provisional',
    ]);
  });

  t.test('aggregated: a bucket left empty is a 410', async (t) => {
    const daily = await since(tokens.daily, '&aggregate=P1D');
    t.equal(daily.status, 410, 'the 3rd of January of A holds nothing any more');
  });
});
