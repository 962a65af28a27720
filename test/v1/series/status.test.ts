/**
 * The series with the status of its measurements over real HTTP: the `status` filter (raw and
 * aggregated), `include=status` in JSON, CSV (read by pandas) and Arrow (read by apache-arrow and
 * polars), each against the database's own rows; the refusals; and the validators of each
 * representation. That the selects stay index-only is test/db/timescaledb.test.ts's.
 */
import t from 'tap';
import { seriesSelect } from '../../../src/engine/read/selects.js';
import { STATUSES, type Status } from '../../../src/engine/schemas.js';
import { StatusQuery, statusRequestOf } from '../../../src/v1/measurementsQuery.js';
import { addKey, addMeasurements, addRegularSeries, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { micros } from '../../helpers/arrow.js';
import { get } from '../../helpers/http.js';
import {
  cycleStatuses,
  pandasMissing,
  pandasRows,
  provesStatusArrow,
  type StatusMeasurement,
  setStatus,
} from '../../helpers/statuses.js';

const path = (id: string, query: string) => `/v1/groundwater-monitoring-tubes/${id}/measurements?${query}`;
const FROM = '2024-01-01T00:00:00Z';
const TO = '2024-01-05T00:00:00Z';
const INTERVAL = `from=${FROM}&to=${TO}`;

/** Each element of a JSON series with include=status, in its order of fields. */
const ELEMENT = /^\{"observedAt":"[^"]+","value":[^,]+,"status":"(approved|provisional|rejected)"\}$/;

t.test('the status of a series', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  const [mixed, quoted, empty] = await addWell(sql, 'Well', [
    { number: '1' },
    { number: '2', unit: 'cm', verticalDatum: '"TAW", local' },
    { number: '3' },
  ]);
  await addRegularSeries(sql, mixed!.id, FROM, '2024-01-04T00:00:00Z', '20 minutes');
  await cycleStatuses(sql, mixed!.id);
  // A day with no approved measurement: its bucket is left out when only those pass.
  await setStatus(sql, mixed!.id, 'provisional', '2024-01-03T00:00:00Z', '2024-01-04T00:00:00Z');
  await addMeasurements(sql, quoted!.id, [
    ['2024-01-01T06:00:00.000001Z', '-0.001'],
    ['2024-01-02T06:00:00Z', '12.3456789012345'],
  ]);
  await setStatus(sql, quoted!.id, 'rejected', '2024-01-02T00:00:00Z', '2024-01-03T00:00:00Z');
  const { key } = await addKey(sql, { tubeIds: [mixed!.id, quoted!.id, empty!.id] });
  const as = { 'x-api-key': key };
  const fetchSeries = (id: string, query: string, headers: Record<string, string> = {}) =>
    get(api.base, path(id, query), { ...as, ...headers });

  /** The tube's measurements of `statuses` as the database holds them, oldest first. */
  async function stored(tubeId: number, statuses: readonly Status[] = STATUSES) {
    const rows = await sql<{ micros: string; value: number; status: number }[]>`
      select (extract(epoch from observed_at) * 1000000)::int8::text as micros,
             measurement_value(value, value_thousandths) as value, status
      from measurements
      where tube_id = ${tubeId} and observed_at >= ${FROM} and observed_at < ${TO}
        and status = any(${statuses.map((status) => STATUSES.indexOf(status))}::int2[])
      order by observed_at`;
    return rows.map((row) => ({
      micros: BigInt(row.micros),
      value: row.value,
      status: STATUSES[row.status]!,
    }));
  }
  const asStored = (measurements: StatusMeasurement[]) =>
    measurements.map(({ observedAt, value, status }) => ({ micros: micros(observedAt), value, status }));

  t.test('include=status: every measurement with its status, after its value', async (t) => {
    for (const tube of [mixed!, quoted!]) {
      const response = await fetchSeries(tube.identifier, `${INTERVAL}&include=status`);
      t.equal(response.status, 200);
      const series = JSON.parse(response.body);
      t.same(asStored(series.measurements), await stored(tube.id), 'the stored rows and statuses');
      const elements = response.body.slice(response.body.indexOf('[') + 1, -2).split(/(?<=\}),(?=\{)/);
      t.ok(
        elements.every((element) => ELEMENT.test(element)),
        'each element is {"observedAt","value","status"}',
      );
    }
    const none = await fetchSeries(empty!.identifier, `${INTERVAL}&include=status`);
    t.same(JSON.parse(none.body).measurements, []);
  });

  t.test('without status or include, the series is as before', async (t) => {
    const response = await fetchSeries(mixed!.identifier, INTERVAL);
    t.notMatch(response.body, /status/);
    const series = JSON.parse(response.body);
    t.equal(series.measurements.length, (await stored(mixed!.id)).length, 'every status');
  });

  t.test('the filter: only measurements of the listed statuses', async (t) => {
    const filters: Status[][] = [['approved'], ['provisional', 'rejected'], ['rejected', 'approved']];
    for (const filter of filters) {
      const query = `${INTERVAL}&status=${filter.join(',')}&include=status`;
      const series = JSON.parse((await fetchSeries(mixed!.identifier, query)).body);
      t.same(asStored(series.measurements), await stored(mixed!.id, filter), filter.join(','));
      const plain = JSON.parse((await fetchSeries(mixed!.identifier, `${INTERVAL}&status=${filter}`)).body);
      t.same(
        plain.measurements,
        series.measurements.map(({ observedAt, value }: StatusMeasurement) => ({ observedAt, value })),
        `${filter}: the same rows without their status`,
      );
    }
  });

  t.test('a filter that lists every status is the series unfiltered, bytes and tag', async (t) => {
    for (const format of ['json', 'csv', 'arrow']) {
      const all = await fetchSeries(
        mixed!.identifier,
        `${INTERVAL}&status=rejected,approved,provisional&format=${format}`,
      );
      const none = await fetchSeries(mixed!.identifier, `${INTERVAL}&format=${format}`);
      t.same(all.bytes, none.bytes, `${format}: the same bytes`);
      t.equal(all.headers.etag, none.headers.etag, `${format}: the same representation`);
    }
  });

  t.test('aggregated, the buckets of the measurements that pass; empty ones left out', async (t) => {
    const expected = await sql<
      { observedAt: string; value: number; min: number; max: number; count: number }[]
    >`
      select to_char(date_trunc('day', observed_at at time zone 'UTC'), 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as "observedAt",
             avg(value order by observed_at) as value, min(value) as min, max(value) as max, count(*)::int as count
      from (select observed_at, measurement_value(value, value_thousandths) as value from measurements
            where tube_id = ${mixed!.id} and status = 0) as approved
      group by 1 order by 1`;
    t.equal(expected.length, 2, 'two days hold approved measurements, the third none');
    const series = JSON.parse(
      (await fetchSeries(mixed!.identifier, `${INTERVAL}&aggregate=P1D&status=approved`)).body,
    );
    t.same(series.measurements, [...expected], 'mean, min, max and count of the approved ones');
    const every = JSON.parse((await fetchSeries(mixed!.identifier, `${INTERVAL}&aggregate=P1D`)).body);
    t.equal(every.measurements.length, 3, 'unfiltered, all three days');
  });

  t.test('refusals: 400 naming the parameter', async (t) => {
    const cases: [string, string, RegExp][] = [
      ['include=status&aggregate=P1D', 'include', /aggregate/],
      ['include=value', 'include', /`status`/],
      ['include=status,status', 'include', /more than once/],
      ['include=status&include=status', 'include', /more than once/],
      ['include=', 'include', /empty item/],
      ['status=', 'status', /empty item/],
      ['status=approved,', 'status', /empty item/],
      ['status=Approved', 'status', /`approved`, `provisional`, `rejected`/],
      ['status=removed', 'status', /`approved`, `provisional`, `rejected`/],
      ['status=approved,approved', 'status', /more than once/],
      ['status=approved&status=rejected', 'status', /more than once/],
    ];
    for (const [query, parameter, message] of cases) {
      const response = await fetchSeries(mixed!.identifier, `${INTERVAL}&${query}`);
      t.equal(response.status, 400, query);
      const { errors } = JSON.parse(response.body);
      t.same(Object.keys(errors), [parameter], `${query}: errors.${parameter} alone`);
      t.match(errors[parameter][0], message, `${query}: says why`);
    }
  });

  t.test('CSV: a status column right after value; pandas reads it', async (t) => {
    const query = `${INTERVAL}&status=approved,rejected&include=status`;
    const csv = await fetchSeries(quoted!.identifier, `${query}&format=csv`);
    t.equal(
      csv.body,
      [
        'observedAt,value,status,unit,verticalDatum',
        '2024-01-02T06:00:00Z,12.3456789012345,rejected,cm,"""TAW"", local"',
        '',
      ].join('\r\n'),
      'the rejected one only, its status after its value',
    );
    const skip = pandasMissing && !process.env.CI && 'pandas is missing';
    if (skip) return;
    const json = JSON.parse((await fetchSeries(mixed!.identifier, query)).body);
    const read = await pandasRows(`${api.base}${path(mixed!.identifier, `${query}&format=csv`)}`, key);
    t.same(read.columns, ['observedAt', 'value', 'status', 'unit', 'verticalDatum'], 'pandas: the columns');
    t.equal(read.status, 'object', 'pandas: status as text');
    t.same(
      read.rows,
      json.measurements.map((m: StatusMeasurement) => [m.observedAt, m.value, m.status]),
      'pandas: every row as the JSON has it',
    );
  });

  t.test('Arrow: a dictionary-encoded status column; apache-arrow and polars read it', async (t) => {
    for (const query of [`${INTERVAL}&include=status`, `${INTERVAL}&include=status&status=rejected`]) {
      for (const tube of [mixed!, quoted!, empty!]) {
        const arrow = await fetchSeries(tube.identifier, `${query}&format=arrow`);
        t.equal(arrow.status, 200);
        const json = JSON.parse((await fetchSeries(tube.identifier, query)).body);
        await t.test(`${tube.number}, ${query}`, async (t) =>
          provesStatusArrow(t, arrow.bytes!, json.measurements),
        );
      }
    }
  });

  t.test('validators: each representation its own tag; a status change a new one', async (t) => {
    const tagOf = async (query: string) =>
      (await fetchSeries(mixed!.identifier, query)).headers.etag as string;
    const queries = [
      INTERVAL,
      `${INTERVAL}&include=status`,
      `${INTERVAL}&status=approved`,
      `${INTERVAL}&status=approved&include=status`,
      `${INTERVAL}&status=approved,rejected`,
      `${INTERVAL}&status=rejected`,
    ];
    const tags = await Promise.all(queries.map(tagOf));
    t.equal(new Set(tags).size, queries.length, 'every tag differs');
    t.equal(
      await tagOf(`${INTERVAL}&status=rejected,approved`),
      tags[4],
      'the order of the list does not count',
    );
    const conditional = await fetchSeries(mixed!.identifier, `${INTERVAL}&include=status`, {
      'if-none-match': tags[1]!,
    });
    t.equal(conditional.status, 304, 'a 304 for the same representation');
    await setStatus(sql, mixed!.id, 'approved', '2024-01-03T00:00:00Z', '2024-01-03T01:00:00Z');
    const after = await Promise.all(queries.map(tagOf));
    t.ok(
      after.every((tag, i) => tag !== tags[i]),
      'a status change changes every tag of the tube',
    );
  });

  t.test('a filter of every status is no filter at all', async (t) => {
    const every = statusRequestOf(
      StatusQuery.parse({ status: 'rejected,provisional,approved', include: 'status' }),
    );
    t.same(every, { statuses: undefined, withStatus: true });
    t.equal(
      seriesSelect(mixed!.id, FROM, TO, every),
      seriesSelect(mixed!.id, FROM, TO, { withStatus: true }),
      'the select of the series without a filter',
    );
  });
});
