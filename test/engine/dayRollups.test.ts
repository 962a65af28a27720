/**
 * The daily rollups (sql/011, src/engine/read/dayRollups.ts): after any sequence of imports (with and
 * without status), status changes and removals, every daily bucket served from them is the same doubles
 * as the bucket computed from the measurements (buckets.ts, as a bucket that is not a UTC day is
 * computed), for every status filter, and a day with no measurement passing the filter is left out by
 * both; on plain PostgreSQL, and on a native TimescaleDB hypertable whose chunks are compressed at random
 * points. Values with many digits, so that a mean summed in another order, or from partial sums, would
 * differ in its last bits. And the daily delta of each write, applied to the buckets before it, gives
 * the buckets after it.
 */
import fc from 'fast-check';
import t, { type Test } from 'tap';
import { AGGREGATE_SECONDS } from '../../src/contract.js';
import type { Sql } from '../../src/db/connect.js';
import { usesTimescaleDb } from '../../src/db/migrate.js';
import { parseInstant } from '../../src/domain/datetime.js';
import { STATUSES } from '../../src/domain/status.js';
import { bucketsOf } from '../../src/engine/read/buckets.js';
import { unsummedDaysSelect } from '../../src/engine/read/dayRollups.js';
import { statusCondition } from '../../src/engine/read/literals.js';
import { aggregateSelect } from '../../src/engine/read/selects.js';
import { removeMeasurements, setStatus } from '../../src/importers/measurements/corrections.js';
import type { ImportInput } from '../../src/importers/measurements/importInput.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { deltaSelect } from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import { timescaleServerOrSkip } from '../helpers/database.js';
import { OTHER, registeredDatabase, TUBE } from '../helpers/importFixtures.js';
import { point } from '../helpers/sync.js';
import { compressChunks } from '../helpers/timescale.js';

const DAY_MS = 86_400_000;
/** Four UTC days; the data reach a day beyond them on either side. */
const FIRST_DAY = Date.parse('2024-03-29T00:00:00Z');
const DAYS = 4;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

/** Intervals from a UTC midnight: whole days, and with a last bucket cut short by `to`. */
const INTERVALS = [
  { from: iso(FIRST_DAY), to: iso(FIRST_DAY + DAYS * DAY_MS) },
  { from: iso(FIRST_DAY + DAY_MS), to: iso(FIRST_DAY + 3 * DAY_MS + 7.5 * 3_600_000) },
];

/** No filter, and every non-empty set of statuses. */
const FILTERS: (number[] | undefined)[] = [undefined, [0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]];

const TUBES = [TUBE, OTHER];

/** An instant within the days around the intervals, often on or next to a midnight. */
const instant = fc.oneof(
  fc
    .integer({ min: -1, max: DAYS })
    .chain((day) =>
      fc.constantFrom(0, 1, DAY_MS - 1, 60_000, DAY_MS - 60_000).map((at) => FIRST_DAY + day * DAY_MS + at),
    ),
  fc.integer({ min: -DAY_MS, max: (DAYS + 1) * DAY_MS - 1 }).map((at) => FIRST_DAY + at),
);

const row = fc.record({
  tube: fc.constantFrom(...TUBES),
  at: instant,
  // Six decimals over a wide range: sums that round, and differ in their order. Now and then a value
  // too large to sum ahead of a read, or whose sum overflows.
  value: fc.oneof(
    {
      arbitrary: fc.integer({ min: -9_999_999_999, max: 9_999_999_999 }).map((n) => (n / 1e6).toString()),
      weight: 30,
    },
    { arbitrary: fc.constantFrom('1e141', '-2.5e200', '1.79769313486231e308', '-1.7e308'), weight: 1 },
  ),
  status: fc.constantFrom(...STATUSES),
});

const importOp = fc.record({
  kind: fc.constant('import' as const),
  withStatus: fc.boolean(),
  // Rising: each tube's rows in time order, which the direct path takes when they follow what is stored.
  rising: fc.boolean(),
  rows: fc.uniqueArray(row, { minLength: 1, maxLength: 40, selector: (r) => `${r.tube} ${r.at}` }),
});

/** [from, to) between two instants, in either order. */
const span = fc.tuple(instant, instant).map(([a, b]) => ({ from: Math.min(a, b), to: Math.max(a, b) + 1 }));

const statusOp = fc.record({
  kind: fc.constant('status' as const),
  status: fc.constantFrom(...STATUSES),
  tubes: fc.oneof(
    fc.constant('all' as const),
    fc.constantFrom(...TUBES).map((tube) => [tube]),
  ),
  span,
});

const removeOp = fc.record({ kind: fc.constant('remove' as const), tube: fc.constantFrom(...TUBES), span });

/** Imports (both paths, with and without status), status changes and removals. */
const operation = fc.oneof(
  { arbitrary: importOp, weight: 3 },
  { arbitrary: statusOp, weight: 2 },
  { arbitrary: removeOp, weight: 1 },
);
type Operation = typeof operation extends fc.Arbitrary<infer Op> ? Op : never;

const instantOf = (ms: number) => parseInstant(new Date(ms).toISOString());

async function write(sql: Sql, op: Operation | { kind: 'compress' }): Promise<void> {
  if (op.kind === 'compress') {
    const { compressed, uncompressed } = await compressChunks(sql);
    if (uncompressed > 0) throw new Error(`${uncompressed} chunks left uncompressed`);
    met.compressedChunks += compressed;
    return;
  }
  if (op.kind === 'import') return importRows(sql, op);
  const interval = { from: instantOf(op.span.from), to: instantOf(op.span.to) };
  if (op.kind === 'status') await setStatus(sql, op.tubes, interval, op.status);
  else await removeMeasurements(sql, op.tube, interval);
}

/** What the writes and comparisons met, so that a run that never met a case cannot pass for one that did. */
const met = {
  buckets: 0,
  errors: 0,
  unsummedDays: 0,
  deltaBuckets: 0,
  refusedDeltas: 0,
  overflowingDeltas: 0,
  subsetRows: 0,
  directImports: 0,
  stagedImports: 0,
  writesAfterCompressing: 0,
  compressedChunks: 0,
};

async function importRows(
  sql: Sql,
  { withStatus, rising, rows }: Extract<Operation, { kind: 'import' }>,
): Promise<void> {
  const ordered = rising ? rows.toSorted((a, b) => a.tube.localeCompare(b.tube) || a.at - b.at) : rows;
  const csv =
    (withStatus ? 'tubeIdentifier,observedAt,value,status\n' : 'tubeIdentifier,observedAt,value\n') +
    ordered
      .map((r) =>
        [r.tube, new Date(r.at).toISOString(), r.value, ...(withStatus ? [r.status] : [])].join(','),
      )
      .join('\n');
  let readings = 0;
  const input: ImportInput = {
    full: false,
    async *read() {
      readings++;
      yield Buffer.from(`${csv}\n`);
    },
    async close() {},
  };
  await importMeasurements(sql, input, { name: 'data.csv' });
  // Read once: the direct path took the file; twice: it gave the file to the staging path.
  if (readings === 1) met.directImports++;
  else met.stagedImports++;
}

/** A bucket as text: its start, and the exact bits of its mean, min and max, and its count. */
const BUCKET_TEXT = `observed_at::text || ' ' || encode(float8send(value), 'hex') || ' ' ||
  encode(float8send(min), 'hex') || ' ' || encode(float8send(max), 'hex') || ' ' || count`;

/** The buckets as text, or the error reading them raises (a mean whose sum overflows). */
async function buckets(sql: Sql, select: string): Promise<string[]> {
  try {
    const rows = await sql.unsafe<{ bucket: string }[]>(`select ${BUCKET_TEXT} as bucket from (${select}) b`);
    return rows.map((r) => r.bucket);
  } catch (error) {
    return [`error: ${(error as Error).message}`];
  }
}

/** The buckets computed from the measurements, each on its own, as any bucket that is not a UTC day. */
function computedSelect(tubeId: number, from: string, to: string, statuses: number[] | undefined): string {
  const days = bucketsOf(from, to, AGGREGATE_SECONDS.P1D);
  return `select ${days.columns}
    from generate_series(0::int8, ${days.count} - 1) as k
    ${days.perBucket(String(tubeId), 'k', statusCondition(statuses, STATUSES.length))}
    where measured.count > 0
    order by k`;
}

/** Each tube's, interval's and filter's daily buckets as served, by `tube from statuses`. */
type Served = Map<string, string[]>;
const servedKey = (tube: number, from: string, statuses: number[] | undefined) =>
  `${tube} ${from} ${statuses ?? 'all'}`;

/** The daily buckets served now, after checking each against the same computed; undefined if one differs. */
async function assertServedAsComputed(t: Test, sql: Sql, step: string): Promise<Served | undefined> {
  const served: Served = new Map();
  const [rollups] = await sql<{ unsummed: number; subsets: number }[]>`
    select count(*) filter (where mean is null)::int as unsummed,
           count(*) filter (where statuses <> present)::int as subsets
    from measurement_day_rollups`;
  met.unsummedDays += rollups!.unsummed;
  met.subsetRows += rollups!.subsets;
  const tubes = await sql<{ id: number }[]>`select id from tubes order by id`;
  for (const { id } of tubes) {
    for (const { from, to } of INTERVALS) {
      for (const statuses of FILTERS) {
        const select = await aggregateSelect(
          sql,
          id,
          from,
          to,
          { bucketFunction: 'date_bin', seconds: 86_400 },
          statuses,
        );
        if (!select.includes('measurement_day_rollups')) throw new Error('not served from the rollups');
        const days = await buckets(sql, select);
        const computed = await buckets(sql, computedSelect(id, from, to, statuses));
        met.buckets += days.length;
        if (days[0]?.startsWith('error:')) met.errors++;
        if (days.join('\n') !== computed.join('\n')) {
          t.same(days, computed, `${step}: tube ${id}, ${from}–${to}, statuses ${statuses ?? 'all'}`);
          return undefined;
        }
        served.set(servedKey(id, from, statuses), days);
      }
    }
  }
  return served;
}

/**
 * The daily delta since `since` as the network route reads it (deltaSelect: the days it touched, from
 * the rollups where they hold them), applied to the buckets served before: the buckets served now. A
 * delta refused (a touched day left empty), and one of a response that fails with an overflowing mean
 * (the delta's then too), are counted instead.
 */
async function assertDeltasApply(
  t: Test,
  sql: Sql,
  since: SyncPoint,
  before: Served,
  now: Served,
  step: string,
): Promise<boolean> {
  for (const [key, after] of now) {
    const [tube, from, filter] = key.split(' ') as [string, string, string];
    const { to } = INTERVALS.find((interval) => interval.from === from)!;
    const statuses = filter === 'all' ? undefined : filter.split(',').map(Number);
    const request = { tubeIds: [Number(tube)], from, to, since, statuses, aggregate: { seconds: 86_400 } };
    const delta = await sql
      .begin('isolation level repeatable read read only', async (tx) => {
        const select = await deltaSelect(tx, request);
        return select === undefined
          ? undefined
          : tx.unsafe<{ bucket: string }[]>(`select ${BUCKET_TEXT} as bucket from (${select}) b`);
      })
      .then(
        (rows) => rows?.map((row) => row.bucket),
        (error: Error) => [`error: ${error.message}`],
      );
    if (delta === undefined) {
      met.refusedDeltas++;
      continue;
    }
    const failed = (buckets: string[] | undefined) => buckets?.[0]?.startsWith('error:') ?? false;
    if (failed(delta) && !failed(after)) {
      t.same(delta, after, `${step}: the delta of ${key} fails, the buckets served now do not`);
      return false;
    }
    // A mean that overflows fails the whole response: no copy before it, or none to compare with after.
    if (failed(delta) || failed(before.get(key)) || failed(after)) {
      met.overflowingDeltas++;
      continue;
    }
    met.deltaBuckets += delta.length;
    const copy = new Map((before.get(key) ?? []).map((bucket) => [bucket.split(' ', 2).join(' '), bucket]));
    for (const bucket of delta) copy.set(bucket.split(' ', 2).join(' '), bucket);
    const applied = [...copy.keys()].sort().map((day) => copy.get(day)!);
    if (applied.join('\n') !== after.join('\n')) {
      t.same({ applied, delta }, { applied: after, delta }, `${step}: the delta of ${key} applied`);
      return false;
    }
  }
  return true;
}

/** Runs random writes on `sql`, comparing every daily bucket after each; how many runs it made. */
async function checkWrites(
  t: Test,
  sql: Sql,
  options: { runs: number; compress?: boolean },
): Promise<number> {
  const operations = options.compress
    ? fc.oneof(
        { arbitrary: operation, weight: 6 },
        { arbitrary: fc.constant({ kind: 'compress' as const }), weight: 1 },
      )
    : operation;
  let run = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(operations, { minLength: 1, maxLength: 8 }), async (ops) => {
      run++;
      await sql`delete from measurements`;
      await sql`delete from measurement_day_rollups`;
      let served = await assertServedAsComputed(t, sql, `run ${run}, emptied`);
      for (const [i, op] of ops.entries()) {
        if (op.kind !== 'compress' && ops.slice(0, i).some((earlier) => earlier.kind === 'compress')) {
          met.writesAfterCompressing++;
        }
        const since = await point(sql);
        await write(sql, op);
        const step = `run ${run}, ${op.kind} ${i + 1}`;
        const now = await assertServedAsComputed(t, sql, step);
        if (!served || !now || !(await assertDeltasApply(t, sql, since, served, now, step))) return false;
        served = now;
      }
      return true;
    }),
    { numRuns: options.runs, seed: 29, endOnFailure: true },
  );
  return run;
}

t.test('daily buckets from the rollups are the buckets computed, after any writes', async (t) => {
  const runs = await checkWrites(t, await registeredDatabase(t), { runs: 30 });
  t.ok(met.buckets > 0 && met.subsetRows > 0, `${runs} runs: days of several statuses`);
  t.ok(met.directImports > 0 && met.stagedImports > 0, 'imports by both paths');
  t.ok(met.unsummedDays > 0, 'days whose mean is summed when read');
  t.ok(met.errors > 0, 'buckets whose mean overflows, in both');
  t.ok(
    met.deltaBuckets > 0 && met.refusedDeltas > 0 && met.overflowingDeltas > 0,
    `deltas applied: ${met.deltaBuckets} buckets; ${met.refusedDeltas} refused, ${met.overflowingDeltas} overflowing`,
  );
});

t.test('the same on a TimescaleDB hypertable, across compressed chunks', async (t) => {
  const server = timescaleServerOrSkip(t);
  if (!server) return;
  const sql = await registeredDatabase(t, server);
  t.ok(await usesTimescaleDb(sql), 'measurements is a hypertable');
  const runs = await checkWrites(t, sql, { runs: 8, compress: true });
  t.ok(met.compressedChunks > 0, `${runs} runs: ${met.compressedChunks} chunks compressed`);
  t.ok(
    met.writesAfterCompressing > 0,
    `${runs} runs: ${met.writesAfterCompressing} writes after compressing`,
  );
});

t.test(
  'the days without a mean are found by their own index (sql/017), not among every rollup',
  async (t) => {
    const sql = await registeredDatabase(t);
    // 40 tubes' 1,000 summed days, as the importers leave them, and one day of one tube without a mean.
    await sql`
    insert into measurement_day_rollups (tube_id, day, statuses, present, count, mean, min, max)
    select tube, '2022-01-01T00:00:00Z'::timestamptz + make_interval(days => d), 1, 1, 96,
           case when (tube, d) = (7, 400) then null else 0.5 end, 0, 1
    from generate_series(1, 40) tube, generate_series(0, 999) d`;
    await sql`analyze measurement_day_rollups`;
    const tubes = Array.from({ length: 40 }, (_, i) => i + 1);
    const select = unsummedDaysSelect(tubes, '2023-01-01T00:00:00Z', '2024-01-01T00:00:00Z')!;
    const plan = await sql.unsafe<{ 'QUERY PLAN': string }[]>(`explain (costs off) ${select}`);
    t.match(
      plan.map((row) => row['QUERY PLAN']).join('\n'),
      /Index (Only )?Scan using measurement_day_rollups_unsummed/,
      'a network year looked up in the partial index',
    );
    t.same(await sql.unsafe(select), [{ tube: 7, k: 400 - 365 }], 'the one day, numbered from `from`');
  },
);
