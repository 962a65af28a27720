/**
 * The network with the status of its measurements over real HTTP: each tube's element with `status`
 * and `include=status` exactly the series endpoint's, the CSV (read by pandas) and the Arrow (read by
 * apache-arrow and polars) against the JSON, the refusals, and the validators of each representation.
 */
import t from 'tap';
import { STATUSES } from '../../../src/engine/schemas.js';
import { addKey } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { addOrderedNetwork, LOCAL_JANUARY, networkPath } from '../../helpers/network.js';
import {
  cycleStatuses,
  pandasMissing,
  pandasRows,
  provesStatusArrow,
  type StatusMeasurement,
  type StatusRow,
  setStatus,
} from '../../helpers/statuses.js';

interface StatusSeries {
  tubeIdentifier: string;
  unit: string;
  verticalDatum: string;
  measurements: StatusMeasurement[];
}

t.test('the status on the network', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const { precise, empty, quoted, long, inOrder } = await addOrderedNetwork(sql);
  await cycleStatuses(sql, long.id);
  await cycleStatuses(sql, precise.id);
  await setStatus(sql, quoted.id, 'rejected', '2024-01-02T06:30:00Z', '2024-01-03T00:00:00Z');
  const { key } = await addKey(sql, { tubeIds: [precise.id, empty.id, quoted.id, long.id] });
  const as = { 'x-api-key': key };
  const fetchNetwork = (extra: string, headers: Record<string, string> = {}) =>
    get(api.base, networkPath(LOCAL_JANUARY, extra), { ...as, ...headers });
  const seriesBody = async (identifier: string, extra: string) =>
    (
      await get(
        api.base,
        `/v1/groundwater-monitoring-tubes/${identifier}/measurements?from=${encodeURIComponent(LOCAL_JANUARY.from)}&to=${LOCAL_JANUARY.to}${extra}`,
        as,
      )
    ).body;
  /** Every row of a network JSON, with its tube's fields. */
  const rowsOf = (series: StatusSeries[]): StatusRow[] =>
    series.flatMap(({ tubeIdentifier, unit, verticalDatum, measurements }) =>
      measurements.map((m) => ({ ...m, tubeIdentifier, unit, verticalDatum })),
    );

  const QUERIES = [
    '&include=status',
    '&include=status&status=approved',
    '&status=provisional,rejected',
    '&status=rejected&aggregate=P1D',
  ];

  t.test("each tube's element is the series endpoint's, byte for byte", async (t) => {
    for (const extra of QUERIES) {
      const response = await fetchNetwork(extra);
      t.equal(response.status, 200, extra);
      const network = JSON.parse(response.body);
      t.same(
        network.series.map((series: StatusSeries) => series.tubeIdentifier),
        inOrder,
        `${extra}: every tube, in discovery's order`,
      );
      for (const series of network.series) {
        t.equal(
          JSON.stringify(series),
          await seriesBody(series.tubeIdentifier, extra),
          `${extra}: ${series.tubeIdentifier}`,
        );
      }
    }
    const approved = JSON.parse((await fetchNetwork('&include=status&status=approved')).body);
    const statuses = new Set(rowsOf(approved.series).map((row) => row.status));
    t.same([...statuses], ['approved'], 'the filter passes only what it lists');
    const every = JSON.parse((await fetchNetwork('&include=status')).body);
    t.same(
      [...new Set(rowsOf(every.series).map((row) => row.status))].sort(),
      [...STATUSES],
      'the fixture holds every status',
    );
  });

  t.test('refusals: 400 naming the parameter', async (t) => {
    for (const [extra, parameter] of [
      ['&include=status&aggregate=P1D', 'include'],
      ['&status=approved,removed', 'status'],
      ['&include=status&include=status', 'include'],
    ] as const) {
      const response = await fetchNetwork(extra);
      t.equal(response.status, 400, extra);
      t.same(Object.keys(JSON.parse(response.body).errors), [parameter], extra);
    }
  });

  t.test('CSV: a status column right after value; pandas reads it as the JSON', async (t) => {
    const extra = '&include=status&status=approved,rejected';
    const csv = await fetchNetwork(`${extra}&format=csv`);
    t.equal(
      csv.body.slice(0, csv.body.indexOf('\r\n')),
      'tubeIdentifier,observedAt,value,status,unit,verticalDatum',
    );
    t.match(
      csv.body,
      /\r\n[^,]+,2024-01-02T07:00:00Z,5,rejected,cm,"""TAW"", local"\r\n/,
      'a row of the quoted tube',
    );
    if (pandasMissing && !process.env.CI) return;
    const json = JSON.parse((await fetchNetwork(extra)).body);
    const read = await pandasRows(`${api.base}${networkPath(LOCAL_JANUARY, `${extra}&format=csv`)}`, key);
    t.same(read.columns, ['tubeIdentifier', 'observedAt', 'value', 'status', 'unit', 'verticalDatum']);
    t.same(
      read.rows,
      rowsOf(json.series).map((row) => [row.observedAt, row.value, row.status, row.tubeIdentifier]),
      'pandas: every row as the JSON has it',
    );
  });

  t.test('Arrow: apache-arrow and polars read the status as the JSON has it', async (t) => {
    for (const extra of [
      '&include=status',
      '&include=status&status=rejected',
      `&include=status&tubes=${empty.identifier}`,
    ]) {
      const arrow = await fetchNetwork(`${extra}&format=arrow`);
      t.equal(arrow.status, 200);
      const json = JSON.parse((await fetchNetwork(extra)).body);
      await t.test(extra, async (t) =>
        provesStatusArrow(t, arrow.bytes!, rowsOf(json.series), { network: true }),
      );
    }
  });

  t.test('validators: each representation its own tag; a status change a new one', async (t) => {
    const tagOf = async (extra: string) => (await fetchNetwork(extra)).headers.etag as string;
    const queries = [
      '',
      '&include=status',
      '&status=approved',
      '&status=approved&include=status',
      '&status=approved,rejected',
    ];
    const tags = await Promise.all(queries.map(tagOf));
    t.equal(new Set(tags).size, queries.length, 'every tag differs');
    t.equal(await tagOf('&status=rejected,approved'), tags[4], 'the order of the list does not count');
    const conditional = await fetchNetwork('&include=status', { 'if-none-match': tags[1]! });
    t.equal(conditional.status, 304, 'a 304 for the same representation');
    await setStatus(sql, quoted.id, 'approved', '2024-01-02T00:00:00Z', '2024-01-02T06:30:00Z');
    const after = await Promise.all(queries.map(tagOf));
    t.ok(
      after.every((tag, i) => tag !== tags[i]),
      'a status change of one tube changes the tags',
    );
  });
});
