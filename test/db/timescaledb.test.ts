/**
 * The TimescaleDB path of the schema, on native TimescaleDB (testkit/timescale.ts): our migrations make
 * measurements a compressed hypertable, and the API's series query answers the same, in the same order,
 * from compressed and uncompressed chunks as it does from the plain table of the suite's PostgreSQL.
 * Both databases get identical data from the same statement.
 */

import t, { type Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { MIGRATION_LOCK_TIMEOUT_MS, migrate, readMigrations, usesTimescaleDb } from '../../src/db/migrate.js';
import { parseInstant } from '../../src/domain/datetime.js';
import { readBatches } from '../../src/engine/read/binaryCopy.js';
import { dayRollupSelect } from '../../src/engine/read/dayRollups.js';
import { aggregateSelect, type BucketFunction, seriesSelect } from '../../src/engine/read/selects.js';
import { instantText, numberText } from '../../src/engine/write/text.js';
import {
  measurementsMatchedSelect,
  measurementsPageParts,
  measurementsPageSelect,
} from '../../src/v1/ogc/features.js';
import type { TubeInView } from '../../src/v1/tubesInView.js';
import { freshDatabase, timescaleServerOrSkip } from '../helpers/database.js';
import { provesLocationColumns } from '../helpers/locations.js';
import { chunksInPlan } from '../helpers/timescale.js';

/** 2024-01-01 up to 2024-05-01 in 15-minute steps: four months, five 30-day chunks. */
const DATA_FROM = '2024-01-01T00:00:00Z';
const DATA_TO = '2024-05-01T00:00:00Z';
const TUBES = 3;
const QUARTER_HOURS = (Date.parse(DATA_TO) - Date.parse(DATA_FROM)) / 900_000;

/** Three tubes, each with a quarter-hour series whose instants carry microseconds and whose values are
 * decimals of up to 9 significant digits, the quarter hours of each hour approved, provisional,
 * rejected, approved; the same on every server. Returns the tube ids. */
async function seed(sql: Sql): Promise<number[]> {
  const [well] = await sql<{ id: number }[]>`insert into wells (name) values ('Well A') returning id`;
  const tubes = await sql<{ id: number }[]>`
    insert into tubes (identifier, well_id, number)
    select gen_random_uuid(), ${well!.id}, n::text from generate_series(1, ${TUBES}) n
    returning id`;
  await sql`
    insert into measurements (tube_id, observed_at, value, status)
    select tube.id,
           ${DATA_FROM}::timestamptz + n * interval '15 minutes' + (n % 7) * interval '0.000123 seconds',
           round(((n * 7919 + tube.id * 104729) % 1000003) / 10000.0 - 50, 4),
           (n % 4 % 3)::int2
    from tubes tube, generate_series(0, ${QUARTER_HOURS - 1}) n`;
  // Written here rather than by an importer: the daily rollups too (sql/011).
  await sql`select rollup_tube_measurements(id) from tubes`;
  return tubes.map((tube) => tube.id).sort((a, b) => a - b);
}

/** A measurement as PostgreSQL's own text writes it, in the API's RFC 3339 UTC form. */
interface MeasurementRow {
  observedAt: string;
  value: string;
}

/** The endpoint's own query (src/engine/read/selects.ts): SQL text with its values as literals. */
function seriesQuery(tube: number, from: string, to: string): string {
  return seriesSelect(tube, from, to);
}

/** The query run plainly, its times and values printed by the server (the session is in UTC). */
async function series(sql: Sql, tube: number, from: string, to: string): Promise<MeasurementRow[]> {
  return [
    ...(await sql.unsafe<MeasurementRow[]>(`
      select replace(replace(observed_at::text, ' ', 'T'), '+00', 'Z') as "observedAt", value::text as value
      from (${seriesQuery(tube, from, to)}) series`)),
  ];
}

/** As the endpoint reads: binary COPY in a read-only transaction, decoded, written as the JSON writes. */
async function seriesByCursor(sql: Sql, tube: number, from: string, to: string): Promise<MeasurementRow[]> {
  const rows: MeasurementRow[] = [];
  await sql.begin('read only', async (tx) => {
    for await (const batch of readBatches(tx, seriesSelect(tube, from, to), 'raw', 1000)) {
      for (let i = 0; i < batch.length; i++) {
        rows.push({ observedAt: instantText(batch.observedAt[i]!), value: numberText(batch.value[i]!) });
      }
    }
  });
  return rows;
}

async function explain(sql: Sql, tube: number, from: string, to: string): Promise<unknown> {
  return [...(await sql.unsafe(`explain (format json) ${seriesQuery(tube, from, to)}`))];
}

/**
 * The series query with parameters in place of its literals, for a generic plan: a tube id and bounds
 * no real query has, replaced by $1 to $3.
 */
function parameterizedSeriesQuery(): string {
  const text = seriesQuery(-424242, '0001-01-01T00:00:00.000001Z', '0001-01-01T00:00:00.000002Z')
    .replace('-424242', '$1')
    .replace(`'0001-01-01T00:00:00.000001Z'::timestamptz`, '$2')
    .replace(`'0001-01-01T00:00:00.000002Z'::timestamptz`, '$3');
  if (!text.includes('$3')) throw new Error('the series query changed its literals');
  return text;
}

/** Microseconds since the epoch of the series query's RFC 3339 UTC form `2024-01-01T00:15:00.000123Z`. */
function micros(text: string): bigint {
  const match = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?Z$/.exec(text);
  if (!match) throw new Error(`not an RFC 3339 UTC text: ${text}`);
  const seconds = BigInt(Date.parse(`${match[1]}T${match[2]}Z`) / 1000);
  return seconds * 1_000_000n + BigInt((match[3] ?? '').padEnd(6, '0'));
}

function strictlyAscending(rows: MeasurementRow[]): boolean {
  return rows.every((row, i) => i === 0 || micros(rows[i - 1]!.observedAt) < micros(row.observedAt));
}

async function chunks(sql: Sql) {
  return sql<{ name: string; start: Date; end: Date; compressed: boolean }[]>`
    select chunk_name as name, range_start as start, range_end as end, is_compressed as compressed
    from timescaledb_information.chunks where hypertable_name = 'measurements' order by range_start`;
}

function nodeTypes(plan: unknown): string[] {
  return [...JSON.stringify(plan).matchAll(/"Node Type":"([^"]+)"/g)].map((m) => m[1]!);
}

/**
 * The sort keys of a plan's Sort nodes that sort rows. A compressed chunk's batches may be sorted by
 * their first and last instants (`_ts_meta_…`, a row per thousand measurements) so that the scan over
 * them gives its rows in order; that is not a sort of the rows.
 */
function rowSorts(plan: unknown): string[][] {
  const keys = [...JSON.stringify(plan).matchAll(/"Sort Key":(\[[^\]]*\])/g)].map(
    (m) => JSON.parse(m[1]!) as string[],
  );
  return keys.filter((key) => !key.every((column) => column.includes('._ts_meta_')));
}

const server = timescaleServerOrSkip(t);
if (server) {
  const tsdb = (await freshDatabase(t, { server, migrated: false })).sql;
  const plain = (await freshDatabase(t)).sql;

  t.test('migrate makes measurements a hypertable with compression and a compression policy', async (t) => {
    const result = await migrate(tsdb);
    t.same(
      result.applied.map((m) => m.version),
      (await readMigrations()).map((m) => m.version),
    );
    t.equal(result.timescaledb, true);

    const dimensions = await tsdb`
      select column_name, dimension_type, time_interval::text as time_interval
      from timescaledb_information.dimensions where hypertable_name = 'measurements'`;
    t.same(
      [...dimensions],
      [{ column_name: 'observed_at', dimension_type: 'Time', time_interval: '30 days' }],
    );

    const [hypertable] = await tsdb`
      select compression_enabled from timescaledb_information.hypertables where hypertable_name = 'measurements'`;
    t.equal(hypertable?.compression_enabled, true);
    const settings = await tsdb`
      select attname, segmentby_column_index, orderby_column_index, orderby_asc
      from timescaledb_information.compression_settings where hypertable_name = 'measurements'
      order by attname`;
    t.same(
      [...settings],
      [
        { attname: 'observed_at', segmentby_column_index: null, orderby_column_index: 1, orderby_asc: true },
        { attname: 'tube_id', segmentby_column_index: 1, orderby_column_index: null, orderby_asc: null },
      ],
    );

    const jobs = await tsdb`
      select proc_name, config->>'compress_after' as compress_after, scheduled,
             (extract(epoch from (config->>'lock_timeout')::interval) * 1000)::int as lock_timeout_ms
      from timescaledb_information.jobs
      where proc_name in ('compress_measurements', 'policy_compression')`;
    t.same(
      [...jobs],
      [
        {
          proc_name: 'compress_measurements',
          compress_after: '180 days',
          scheduled: true,
          lock_timeout_ms: MIGRATION_LOCK_TIMEOUT_MS,
        },
      ],
      'the project’s compression job alone, under the migrations’ lock_timeout',
    );
  });

  t.test('migrating again applies nothing and keeps the hypertable', async (t) => {
    const before = await tsdb`select version, checksum, applied_at from schema_migrations order by version`;
    t.same((await migrate(tsdb)).applied, []);
    t.same(await tsdb`select version, checksum, applied_at from schema_migrations order by version`, before);
    t.equal(await usesTimescaleDb(tsdb), true);
    t.equal(
      await usesTimescaleDb(plain),
      false,
      'the suite PostgreSQL has no TimescaleDB: a real comparison',
    );
  });

  let tubes: number[] = [];
  t.test('both servers get the same measurements', async (t) => {
    // The scheduler would run the policy whenever it likes: the chunks compressed are the test's choice
    // until the policy's own test runs the job.
    await tsdb`
      select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
      where proc_name = 'compress_measurements'`;
    const [timescaleTubes, plainTubes] = await Promise.all([seed(tsdb), seed(plain)]);
    t.same(timescaleTubes, plainTubes, 'both servers number the tubes alike');
    tubes = timescaleTubes;
  });

  t.test('older chunks compress; the rest stay row tables', async (t) => {
    const all = await chunks(tsdb);
    t.equal(all.length, 5, 'four months in 30-day chunks');
    await tsdb`select compress_chunk(c) from show_chunks('measurements', older_than => '2024-03-20'::timestamptz) c`;
    const compressed = (await chunks(tsdb)).map((chunk) => chunk.compressed);
    t.same(compressed, [true, true, true, false, false]);
    const [sizes] = await tsdb`
      select sum(before_compression_total_bytes)::bigint as before, sum(after_compression_total_bytes)::bigint as after
      from chunk_compression_stats('measurements')`;
    t.ok(Number(sizes?.after) < Number(sizes?.before), 'compression made the chunks smaller');
  });

  /** Ranges that cross chunk borders and the compressed/uncompressed border, and edge cases. */
  const RANGES: [string, string][] = [
    [DATA_FROM, DATA_TO],
    ['2024-02-10T12:00:00Z', '2024-04-10T00:00:00Z'],
    ['2024-03-18T00:00:00Z', '2024-03-18T01:00:00Z'], // starts exactly on a chunk border: inclusive
    ['2024-01-01T00:15:00.000123Z', '2024-01-01T01:15:00.000123Z'], // exact instants with microseconds
    ['2024-01-01T00:15:00.000124Z', '2024-01-01T00:45:00.000369Z'], // a microsecond past one, up to another
    ['2023-06-01T00:00:00Z', '2023-07-01T00:00:00Z'], // before any data
  ];

  async function assertSameSeries(t: Test, label: string): Promise<void> {
    for (const tube of tubes) {
      for (const [from, to] of RANGES) {
        const expected = await series(plain, tube, from, to);
        const actual = await series(tsdb, tube, from, to);
        t.same(actual, expected, `${label}: tube ${tube}, ${from} .. ${to}`);
        t.ok(strictlyAscending(actual), 'in time order');
      }
    }
    const [whole] = RANGES;
    const expectedWhole = await series(plain, tubes[0]!, ...whole!);
    t.equal(expectedWhole.length, QUARTER_HOURS, 'a whole tube');
    t.same(await seriesByCursor(tsdb, tubes[0]!, ...whole!), expectedWhole, `${label}: through a cursor`);
  }

  t.test('the series query answers as plain PostgreSQL does, across compressed chunks', async (t) => {
    await assertSameSeries(t, 'mixed chunks');
  });

  t.test('interval bounds are exact to the microsecond: from inclusive, to exclusive', async (t) => {
    // Quarter hour n carries n % 7 times 123 µs: 00:15 is at .000123, 00:30 at .000246, 00:45 at .000369.
    for (const sql of [tsdb, plain]) {
      const at = async (from: string, to: string) =>
        (await series(sql, tubes[0]!, from, to)).map((row) => row.observedAt);
      t.same(await at('2024-01-01T00:15:00.000123Z', '2024-01-01T00:45:00.000369Z'), [
        '2024-01-01T00:15:00.000123Z',
        '2024-01-01T00:30:00.000246Z',
      ]);
      t.same(await at('2024-01-01T00:15:00.000124Z', '2024-01-01T00:45:00.00037Z'), [
        '2024-01-01T00:30:00.000246Z',
        '2024-01-01T00:45:00.000369Z',
      ]);
    }
  });

  /**
   * EXPLAIN of the series query as the generic plan of a prepared statement: postgres.js prepares every
   * statement, and PostgreSQL may switch to a generic plan after five executions. Its chunks cannot be
   * excluded while planning, only when the executor starts (TimescaleDB's ChunkAppend).
   */
  async function genericPlan(sql: Sql, tube: number, from: string, to: string): Promise<unknown> {
    return sql.begin(async (tx) => {
      await tx`set local plan_cache_mode = force_generic_plan`;
      await tx.unsafe(
        `prepare series_generic (integer, timestamptz, timestamptz) as ${parameterizedSeriesQuery()}`,
      );
      try {
        return [
          ...(await tx.unsafe(`explain (format json) execute series_generic(${tube}, '${from}', '${to}')`)),
        ];
      } finally {
        await tx`deallocate series_generic`;
      }
    });
  }

  t.test('one tube, one month: the plan reads only the chunks of that month, in order', async (t) => {
    await tsdb`analyze measurements`;
    await plain`vacuum analyze measurements`;
    const all = await chunks(tsdb);
    for (const month of ['2024-01', '2024-02', '2024-03', '2024-04']) {
      const from = new Date(`${month}-01T00:00:00Z`);
      const to = new Date(from);
      to.setUTCMonth(to.getUTCMonth() + 1);
      const bounds = [from.toISOString(), to.toISOString()] as const;
      const expected = all
        .filter((chunk) => chunk.start < to && chunk.end > from)
        .map((chunk) => chunk.name)
        .sort();
      t.ok(expected.length > 0 && expected.length < all.length, `${month}: chunks ${expected.join(', ')}`);

      const custom = await explain(tsdb, tubes[1]!, ...bounds);
      t.same(chunksInPlan(custom), expected, `${month}: planned with the bounds, only its chunks`);
      t.same(rowSorts(custom), [], `${month}: read in order, not sorted`);

      const generic = await genericPlan(tsdb, tubes[1]!, ...bounds);
      t.same(chunksInPlan(generic), expected, `${month}: generic plan, only its chunks`);
      t.match(JSON.stringify(generic), `"Chunks excluded during startup":${all.length - expected.length}`);
      t.same(rowSorts(generic), [], `${month}: generic plan reads in order`);

      const onPlain = await explain(plain, tubes[1]!, ...bounds);
      t.same(nodeTypes(onPlain), ['Index Only Scan'], `${month}: plain PostgreSQL reads the index alone`);
    }
  });

  /**
   * A document locks the chunks of its interval before its snapshot (src/engine/chunkLocks.ts). Its
   * select must plan no other chunk: planning locks it after the snapshot, where a compression of it may
   * already have committed. The select of daily buckets once named `measurements` bounded only by `to`
   * and planned every earlier chunk; the days the rollups hold now plan none.
   */
  t.test('every select of measurements plans only chunks of its interval', async (t) => {
    const all = await chunks(tsdb);
    const overlapping = (from: string, to: string) =>
      all
        .filter((chunk) => chunk.start < new Date(to) && chunk.end > new Date(from))
        .map((chunk) => chunk.name)
        .sort();
    const planned = async (select: string) =>
      chunksInPlan([...(await tsdb.unsafe(`explain (format json) ${select}`))]);
    const march = ['2024-03-01T00:00:00Z', '2024-04-01T00:00:00Z'] as const;
    const cutShort = ['2024-03-01T00:00:00Z', '2024-03-20T06:00:00Z'] as const;
    const fromOne = ['2024-03-01T01:00:00Z', '2024-04-01T00:00:00Z'] as const;
    const [, tube] = tubes;
    const hours = { bucketFunction: 'time_bucket', seconds: 3_600 } as const;
    const days = { bucketFunction: 'time_bucket', seconds: 86_400 } as const;
    // The page's 1,001 quarter hours fill 11 whole days after the day it starts in.
    const listed = tubes.map((id) => ({ id }) as TubeInView);
    const lastHalfDay = '2024-04-30T12:00:00Z';
    const inFirstTube = await measurementsPageParts(tsdb, listed, 1, parseInstant(fromOne[0]), {}, 1_000);
    t.same(
      inFirstTube,
      [
        {
          index: 1,
          from: parseInstant('2024-03-01T01:00:00.000001Z'),
          to: parseInstant('2024-03-13T00:00:00Z'),
        },
      ],
      'a page in one tube: from its cursor to the day its rollups fill it',
    );
    const acrossTwo = await measurementsPageParts(tsdb, listed, 0, parseInstant(lastHalfDay), {}, 1_000);
    t.same(
      acrossTwo,
      [
        { index: 0, from: parseInstant('2024-04-30T12:00:00.000001Z'), to: parseInstant(DATA_TO) },
        { index: 1, from: parseInstant(DATA_FROM), to: parseInstant('2024-01-12T00:00:00Z') },
      ],
      'a page across tubes: the rest of the first, the head of the next',
    );
    const cases: [string, string, string[]][] = [
      ['the series', seriesSelect(tube!, ...march), overlapping(...march)],
      [
        'the series of approved rows with their status',
        seriesSelect(tube!, ...march, { statuses: [0], withStatus: true }),
        overlapping(...march),
      ],
      ['hours', await aggregateSelect(tsdb, tube!, ...march, hours), overlapping(...march)],
      [
        'days from 01:00, computed',
        await aggregateSelect(tsdb, tube!, ...fromOne, days),
        overlapping(...fromOne),
      ],
      ['whole days from the rollups', await aggregateSelect(tsdb, tube!, ...march, days), []],
      ['the network’s whole days', await aggregateSelect(tsdb, tubes, ...march, days, [0]), []],
      [
        'whole days, the last cut short: that day computed',
        await aggregateSelect(tsdb, tubes, ...cutShort, days),
        overlapping('2024-03-20T00:00:00Z', cutShort[1]),
      ],
      [
        'a day the rollups cannot sum: that day computed',
        dayRollupSelect(String(tube), '0', ...march, undefined, undefined, [{ tube: tube!, k: 3 }]),
        overlapping('2024-03-04T00:00:00Z', '2024-03-05T00:00:00Z'),
      ],
      ['a page’s count without a period: the rollups alone', measurementsMatchedSelect(tubes, {}), []],
      [
        'a page that ends in its first tube, from its cursor to its end',
        measurementsPageSelect(listed, 1, parseInstant(fromOne[0]), {}, 1_000, inFirstTube),
        overlapping(fromOne[0], '2024-03-13T00:00:00Z'),
      ],
      [
        'a page across two tubes: the first one’s tail, the next one’s head',
        measurementsPageSelect(listed, 0, parseInstant(lastHalfDay), {}, 1_000, acrossTwo),
        [
          ...new Set([
            ...overlapping(lastHalfDay, DATA_TO),
            ...overlapping(DATA_FROM, '2024-01-12T00:00:00Z'),
          ]),
        ].sort(),
      ],
      [
        'a page’s count of a period: the days it cuts counted',
        measurementsMatchedSelect(tubes, {
          status: ['approved'],
          datetime: { from: parseInstant(fromOne[0]), to: parseInstant(cutShort[1]) },
        }),
        [
          ...new Set([
            ...overlapping(fromOne[0], '2024-03-02T00:00:00Z'),
            ...overlapping('2024-03-20T00:00:00Z', cutShort[1]),
          ]),
        ].sort(),
      ],
    ];
    for (const [name, select, expected] of cases) t.same(await planned(select), expected, name);
    t.ok(
      overlapping(...march).length < all.length && overlapping(...cutShort).length > 0,
      'the fixture has chunks outside the interval',
    );
    t.ok(
      overlapping('2024-01-12T00:00:00Z', lastHalfDay).length > 0,
      'and chunks between the two tubes’ parts',
    );
  });

  t.test('the status, filtered and read, as on plain PostgreSQL; index-only there', async (t) => {
    const request = { statuses: [0, 2], withStatus: true };
    const withStatus = (sql: Sql, tube: number, from: string, to: string) =>
      sql.unsafe(`
        select observed_at::text as "observedAt", value::text as value, status
        from (${seriesSelect(tube, from, to, request)}) series`);
    for (const [from, to] of RANGES) {
      const expected = [...(await withStatus(plain, tubes[1]!, from, to))];
      t.same([...(await withStatus(tsdb, tubes[1]!, from, to))], expected, `${from} .. ${to}`);
      t.ok(
        expected.every(({ status }) => status === 0 || status === 2),
        `${from} .. ${to}: only the statuses listed (${expected.length} rows)`,
      );
    }
    const month = ['2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'] as const;
    const explained = async (sql: Sql, select: string) => [
      ...(await sql.unsafe(`explain (format json) ${select}`)),
    ];
    const plan = async (sql: Sql, select: string) => nodeTypes(await explained(sql, select));
    t.same(
      await plan(plain, seriesSelect(tubes[1]!, ...month, request)),
      ['Index Only Scan'],
      'plain PostgreSQL reads the index alone, the filter and the status included',
    );
    const onTimescale = await explained(tsdb, seriesSelect(tubes[1]!, ...month, request));
    t.same(rowSorts(onTimescale), [], `TimescaleDB reads in order: ${nodeTypes(onTimescale)}`);

    const buckets = async (sql: Sql, bucketFunction: BucketFunction) =>
      sql.unsafe(`
        select observed_at::text as "observedAt", value::text as value, min::text as min, max::text as max, count::int as count
        from (${await aggregateSelect(sql, tubes[1]!, DATA_FROM, DATA_TO, { bucketFunction, seconds: 86_400 }, [0])}) buckets`);
    const days = [...(await buckets(plain, 'date_bin'))];
    t.equal(days.length, 121, 'a bucket per day of the four months');
    t.ok(
      days.every(({ count }) => count === 48),
      'each summarises the approved quarter hours alone',
    );
    t.same([...(await buckets(tsdb, 'time_bucket'))], days, 'time_bucket gives the same buckets');
    // Hours: the days come from the rollups.
    const dateBin = { bucketFunction: 'date_bin', seconds: 3_600 } as const;
    const perBucket = await plan(plain, await aggregateSelect(plain, tubes[1]!, ...month, dateBin, [0]));
    t.ok(perBucket.includes('Index Only Scan'), 'each bucket an index-only scan');
    t.same(
      perBucket,
      await plan(plain, await aggregateSelect(plain, tubes[1]!, ...month, dateBin)),
      'the plan without a filter',
    );
  });

  t.test('upserts land in uncompressed and in compressed chunks', async (t) => {
    const tube = tubes[2]!;
    // For a compressed chunk (January) and a row chunk (April): a new value for an existing instant, and
    // a new instant between two quarter hours.
    for (const day of ['2024-01-10', '2024-04-20']) {
      const [existing] = await series(plain, tube, `${day}T06:00:00Z`, `${day}T06:15:00Z`);
      const changes = [
        { tube_id: tube, observed_at: existing!.observedAt, value: Number(existing!.value) + 1.25 },
        { tube_id: tube, observed_at: `${day}T06:07:00.5Z`, value: -4.125 },
      ];
      for (const sql of [tsdb, plain]) {
        const count = async () => (await sql`select count(*)::int as n from measurements`)[0]?.n;
        const before = await count();
        for (const change of changes) {
          await sql`
            insert into measurements ${sql(change)}
            on conflict (tube_id, observed_at)
            do update set value = excluded.value, value_thousandths = excluded.value_thousandths`;
        }
        t.equal(await count(), before + 1, 'one updated in place, one added');
      }
      t.same(
        await series(tsdb, tube, `${day}T06:00:00Z`, `${day}T06:15:00Z`),
        changes.map(({ observed_at, value }) => ({ observedAt: observed_at, value: String(value) })),
      );
    }
    t.same(
      (await chunks(tsdb)).map((chunk) => chunk.compressed),
      [true, true, true, false, false],
      'a compressed chunk that took an upsert still counts as compressed',
    );
    await assertSameSeries(t, 'after upserts');
  });

  t.test('the compression policy compresses every chunk older than 180 days', async (t) => {
    // Run as the scheduler runs it (held since the data came), then checked for what it did.
    const [job] = await tsdb<{ id: number }[]>`
      select job_id as id from timescaledb_information.jobs
      where proc_name = 'compress_measurements'`;
    t.ok(job, 'the policy job exists');
    const before = await chunks(tsdb);
    t.ok(
      before.some((chunk) => !chunk.compressed),
      'some chunks are left for the policy',
    );
    await tsdb`call run_job(${job!.id})`;
    const [{ cutoff } = { cutoff: new Date(0) }] = await tsdb<{ cutoff: Date }[]>`
      select now() - interval '180 days' as cutoff`;
    const after = await chunks(tsdb);
    t.same(
      after.map((chunk) => chunk.compressed),
      after.map((chunk) => chunk.end <= cutoff),
      `compressed exactly the chunks that ended before ${cutoff.toISOString()}`,
    );
    await assertSameSeries(t, 'after the policy');
  });

  t.test('008: locations and elevations on TimescaleDB', async (t) => {
    await provesLocationColumns(t, tsdb);
  });
}
