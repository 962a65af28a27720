/**
 * Sync benchmark: what a delta of 1,000 changed rows costs on a large table, against a 1,000-row series
 * (issue 23: at most 2×). Ten tubes with a year of 1-minute data each (5,270,400 rows, generated in SQL
 * and vacuumed as an import leaves them), and a year of change history as daily imports of every tube
 * would have left it (3,660 change rows in 366 transactions). Then, from a token taken at that point:
 *
 * - appended: 100 new rows for each tube after its year (the import's direct path: 10 runs);
 * - then corrections: 100 values of each tube given another value, scattered over its year (the staging
 *   path's upsert: 1,000 corrections of one row each);
 * - then a status change: 2,880 rows of one tube approved (`gwapi measurements status`), against a series
 *   of 2,880 rows, without a filter and with status=approved;
 *
 * each delta read (after its import, before the next) by changedMeasurementsSelect for the ten tubes
 * over the whole year and the day after, raw and by day, and a series of 1,000 rows (one tube, 1,000
 * minutes, seriesSelect). Each is read through the response's row source, in a REPEATABLE READ READ ONLY
 * transaction: readBatches (`COPY (…) TO STDOUT (FORMAT binary)` decoded into MeasurementBatch
 * columns). "select alone": the delta's select, with what the change log holds for it (deltaContents)
 * asked once beforehand; "whole": the request's database work as the network route does it, in one
 * snapshot (readSyncToken, currentSyncPoint with the view of all tubes, syncGone, the response's token,
 * deltaSelect with its 410 checks, then the rows); "HTTP": the requests a client sends, to the service
 * in a process of its own (JSON): the network endpoint with changedSince for every tube, against the
 * series endpoint for the series.
 *
 * On each engine of BENCH_ENGINE (lib/engines.ts): on TimescaleDB the year (2024) is compressed as the
 * policy leaves it before the token is taken, so the corrections and the status change land in compressed
 * chunks; each phase's writes are made on every engine, then its reads run on every engine in the same
 * runs, and with both a last table gives each read on TimescaleDB over the same on PostgreSQL (goal:
 * deltas ≤ 1.3×).
 *
 *   npm run bench -- sync [RUNS]        (default 40; DATABASE_URL, or an embedded PostgreSQL; BENCH_ENGINE)
 *
 * Prints the median and quartiles of each, alternating kinds run by run, and the ratios of the medians.
 */
import { Readable } from 'node:stream';
import { connect, type Sql } from '../../src/db/connect.js';
import { parseDateTime } from '../../src/domain/datetime.js';
import { readBatches } from '../../src/engine/read/binaryCopy.js';
import { seriesSelect, shapeOf } from '../../src/engine/read/selects.js';
import { setStatus } from '../../src/importers/measurements/corrections.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import {
  type ChangedMeasurements,
  changedMeasurementsSelect,
  currentSyncPoint,
  type DeltaContents,
  deltaContents,
  deltaSelect,
  loadSyncSecret,
  syncGone,
} from '../../src/sync/sql.js';
import { issueSyncToken, readSyncToken, type SyncPoint } from '../../src/sync/token.js';
import { numberArguments } from '../../testkit/arguments.js';
import { addKey } from '../../testkit/fixtures.js';
import { count, machineLine, median, ms, printTable, quartiles, ratio } from '../../testkit/report.js';
import { addSeriesFixture, dayAfterStart, SERIES_START } from '../../testkit/seriesFixture.js';
import {
  type Engine,
  type EngineDatabase,
  onEachEngine,
  printEngineRatios,
  requireEnginePrerequisites,
} from '../lib/engines.js';
import { timedGet } from '../lib/http.js';

requireEnginePrerequisites();

const [RUNS] = numberArguments(40);
/** Issue 36's goal for a delta on TimescaleDB (compressed chunks) over the same on PostgreSQL. */
const ENGINE_BOUND = 1.3;
const TUBES = 10;
const BATCH = 2000;
const SNAPSHOT = 'isolation level repeatable read read only';
const ALL = { allTubes: true, grants: new Set<number>() };
const FROM = SERIES_START;
const TO = dayAfterStart(367);

/** A select of the row source's columns, raw or aggregated. */
interface Select {
  text: string;
  aggregated: boolean;
}

/** Rows of `select` through the row source, in its own snapshot. */
async function viaSource(sql: Sql, select: Select) {
  let rows = 0;
  await sql.begin(SNAPSHOT, async (tx) => {
    for await (const batch of readBatches(tx, select.text, shapeOf(select.aggregated), BATCH)) {
      rows += batch.length;
    }
  });
  return rows;
}

interface Kind {
  label: string;
  run: () => Promise<number>;
  /** Rows it must read, or over HTTP the status it must answer with. */
  expected: number;
}
/** Each read's times, by engine and label, one per run. */
const times = new Map<string, number[]>();
const timesKey = (engine: Engine, label: string) => `${engine}|${label}`;
/** An engine, by its names. */
type OnEngine = Pick<EngineDatabase, 'engine' | 'engineName'>;
/** Runs of every engine's `kinds` interleaved, the order reversed every other run; the first two warm up. */
async function measure(kinds: [OnEngine, Kind][]): Promise<void> {
  for (let run = -2; run < RUNS; run++) {
    for (const [{ engine, engineName }, kind] of run % 2 === 0 ? kinds : [...kinds].reverse()) {
      const t0 = performance.now();
      const got = await kind.run();
      const elapsed = performance.now() - t0;
      if (got !== kind.expected) throw new Error(`${engineName}, ${kind.label}: ${got} rows`);
      const key = timesKey(engine, kind.label);
      if (run >= 0) times.set(key, [...(times.get(key) ?? []), elapsed]);
    }
  }
}

console.log(`Sync — ${await machineLine()}\n`);
const writers: Sql[] = [];
const { parts: engines, stop } = await onEachEngine('bench_sync', onEngine);
try {
  /** Each engine's writes of a phase, then the phase's reads on all of them in the same runs. */
  for (const phase of [0, 1, 2]) {
    const kinds: [OnEngine, Kind][] = [];
    for (const part of engines) {
      for (const kind of await part.phases[phase]!()) kinds.push([part, kind]);
    }
    await measure(kinds);
  }
  for (const { report } of engines) await report();
  const labels = [...new Set([...times.keys()].map((key) => key.slice(key.indexOf('|') + 1)))];
  printEngineRatios(
    'TimescaleDB over PostgreSQL',
    engines,
    labels.map((label) => ({
      name: label,
      samplesOf: ({ engine }) => times.get(timesKey(engine, label)) ?? [],
      ...(label.startsWith('delta') && !label.includes('P1D') ? { bound: ENGINE_BOUND } : {}),
    })),
    ms,
  );
} finally {
  for (const writer of writers) await writer.end({ timeout: 1 });
  await stop();
}

/**
 * The database of an engine: its fixtures, then the three phases (each writes, then returns its reads)
 * and the report of this engine's own figures.
 */
async function onEngine({ engine, engineName, url, sql, asThePolicyLeavesIt, startApi }: EngineDatabase) {
  const started = performance.now();
  const fixture = await addSeriesFixture(sql, { otherTubes: TUBES - 1 });
  const tubes = await sql<
    { id: number; identifier: string }[]
  >`select id, identifier::text from tubes order by id`;
  // A year of daily imports of every tube, one transaction a day.
  for (let day = 0; day < 366; day++) {
    await sql`
      insert into measurement_changes (tube_id, first_at, last_at)
      select id, ${dayAfterStart(day)}::timestamptz, ${dayAfterStart(day + 1)}::timestamptz - interval '1 minute'
      from tubes`;
  }
  await sql`vacuum analyze measurement_changes`;
  const server = await asThePolicyLeavesIt();
  // The writes are this scenario's setup, not its figures. On TimescaleDB the corrections decompress more
  // than the extension's default limit of tuples a transaction (the import then fails: the write path's
  // to solve), so the writer's sessions lift it.
  let writer = sql;
  if (engine === 'timescaledb') {
    await sql.unsafe(
      'alter database bench_sync set timescaledb.max_tuples_decompressed_per_dml_transaction = 0',
    );
    writer = connect(url, { max: 2, applicationName: 'gwapi bench writer' });
    writers.push(writer);
  }
  const [stored] = await sql<{ rows: string; changes: string }[]>`
    select (select count(*) from measurements) as rows, (select count(*) from measurement_changes) as changes`;
  console.log(
    `${server}\n` +
      `${count(Number(stored!.rows))} measurements of ${TUBES} tubes, ${count(Number(stored!.changes))} change rows; ` +
      `set up in ${((performance.now() - started) / 1000).toFixed(0)} s; ${RUNS} runs of each\n`,
  );

  const secret = await loadSyncSecret(sql);
  const point = () => sql.begin(SNAPSHOT, (tx) => currentSyncPoint(tx, ALL));
  const csv = (lines: string[]) => Readable.from([`tubeIdentifier,observedAt,value\n${lines.join('\n')}\n`]);
  const minute = (n: number) => new Date(Date.parse(SERIES_START) + n * 60_000).toISOString();
  const instantOf = (text: string) => {
    const parsed = parseDateTime(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return parsed.instant;
  };
  // What a client sees: its requests to the service, run in a process of its own.
  const { key, keyId } = await addKey(sql, { allTubes: true });
  const api = await startApi();
  const base = api.base;
  const status = async (path: string) => (await timedGet(`${base}${path}`, { 'x-api-key': key })).status;
  const seriesRequest = (from: string, to: string) => () =>
    status(`/v1/groundwater-monitoring-tubes/${fixture.identifier}/measurements?from=${from}&to=${to}`);
  // A request holds at most 366 days: these from the first correction on, which hold every change.
  const [httpFrom, httpTo] = [minute(1_000), minute(1_000 + 366 * 1_440)];
  const deltaRequest = (since: SyncPoint, query = '') => {
    const token = issueSyncToken(since, keyId, secret);
    return () =>
      status(
        `/v1/groundwater-monitoring-measurements?from=${httpFrom}&to=${httpTo}&changedSince=${token}${query}`,
      );
  };

  const ids = tubes.map((t) => t.id);
  const requestOf = (since: SyncPoint, request: Partial<ChangedMeasurements> = {}): ChangedMeasurements => ({
    tubeIds: ids,
    from: FROM,
    to: TO,
    since,
    ...request,
  });
  /** What the change log holds for a delta: asked once per phase for the select alone, timed in "whole". */
  const contentsOf = (request: ChangedMeasurements) =>
    sql.begin(SNAPSHOT, (tx) => deltaContents(tx, request));
  const delta = (since: SyncPoint, aggregate?: number, contents?: DeltaContents): Select => ({
    text: changedMeasurementsSelect({
      ...requestOf(since, { aggregate: aggregate ? { seconds: aggregate } : undefined }),
      contents,
    }),
    aggregated: aggregate !== undefined,
  });
  // The first 1,000 minutes of the year: rows no correction touches.
  const series: Select = {
    text: seriesSelect(fixture.tubeId, SERIES_START, minute(1_000)),
    aggregated: false,
  };
  /**
   * A delta request as the network route reads it, in one snapshot: the token read, the sync point, the
   * 410 checks (syncGone, then deltaSelect's), and the delta itself; the row source's rows.
   */
  async function wholeDelta(token: string, request: Partial<ChangedMeasurements> = {}): Promise<number> {
    let rows = 0;
    await sql.begin(SNAPSHOT, async (tx) => {
      const since = readSyncToken(token, 'bench', secret)!;
      const now = await currentSyncPoint(tx, ALL);
      if (await syncGone(tx, since, now)) throw new Error('gone');
      issueSyncToken(now, 'bench', secret);
      const select = await deltaSelect(tx, requestOf(since, request));
      if (select === undefined) throw new Error('refused');
      for await (const batch of readBatches(
        tx,
        select,
        shapeOf(request.aggregate, request.withStatus),
        BATCH,
      )) {
        rows += batch.length;
      }
    });
    return rows;
  }

  const seriesKinds: Kind[] = [
    { label: 'series, 1,000 rows', run: () => viaSource(sql, series), expected: 1000 },
    { label: 'series, 1,000 rows, HTTP', run: seriesRequest(SERIES_START, minute(1_000)), expected: 200 },
  ];
  // Where the time of one run goes on the server: planning (each COPY plans its query), execution.
  const serverTimes: string[] = [];
  async function explain(label: string, select: Select): Promise<string[]> {
    const plan = await sql.begin(SNAPSHOT, (tx) =>
      tx.unsafe(`explain (analyze, buffers, costs off, timing off, summary) ${select.text}`),
    );
    const lines = plan.map((r) => String(r['QUERY PLAN']));
    serverTimes.push(
      `${label}: ${lines.filter((line) => /^(Planning|Execution) Time/.test(line)).join(', ')}`,
    );
    return lines;
  }

  /**
   * The reads of the delta since `since` of `rows` rows in `days` days: its select through the row source,
   * the route's whole read, the HTTP request, and by day.
   */
  const deltaKinds = (
    what: string,
    since: SyncPoint,
    contents: DeltaContents,
    rows: number,
    days: number,
  ) => {
    const token = issueSyncToken(since, 'bench', secret);
    return [
      {
        label: `delta, ${what}`,
        run: () => viaSource(sql, delta(since, undefined, contents)),
        expected: rows,
      },
      { label: `delta, ${what}, whole`, run: () => wholeDelta(token), expected: rows },
      { label: `delta, ${what}, HTTP`, run: deltaRequest(since), expected: 200 },
      {
        label: `delta, ${what}, P1D (${count(days)} buckets)`,
        run: () => viaSource(sql, delta(since, 86_400, contents)),
        expected: days,
      },
    ];
  };

  const phase1 = async (): Promise<Kind[]> => {
    // Phase 1: new readings after each tube's year (direct path).
    const beforeAppend = await point();
    const appended = tubes.flatMap((t) =>
      Array.from({ length: 100 }, (_, i) => `${t.identifier},${minute(527_040 + i)},${i}`),
    );
    const a = await importMeasurements(writer, csv(appended), { name: 'appended.csv' });
    await sql`vacuum analyze measurements`;
    const afterAppend = await point();
    const appendedContents = await contentsOf(requestOf(beforeAppend));
    explained.push(async () => {
      await explain('series of 1,000', series);
      await explain('delta of 1,000 appended', delta(beforeAppend));
      await explain('delta of 1,000 appended, P1D', delta(beforeAppend, 86_400));
    });
    appendedCount = a.inserted;
    return [
      ...seriesKinds,
      {
        label: 'delta, nothing changed',
        run: () => viaSource(sql, delta(afterAppend, undefined, appendedContents)),
        expected: 0,
      },
      ...deltaKinds('1,000 appended', beforeAppend, appendedContents, 1000, 10),
    ];
  };

  const phase2 = async (): Promise<Kind[]> => {
    // Phase 2: values given another value, scattered over each tube's year (the upsert).
    const beforeCorrections = await point();
    const corrected = tubes.flatMap((t) =>
      Array.from({ length: 100 }, (_, i) => `${t.identifier},${minute(1_000 + i * 5_171)},${-10 - i}`),
    );
    const c = await importMeasurements(writer, csv(corrected), { name: 'corrections.csv' });
    await sql`vacuum analyze measurements`;
    const correctionsContents = await contentsOf(requestOf(beforeCorrections));
    explained.push(async () => {
      correctionsPlan = await explain(
        'delta of 1,000 corrections',
        delta(beforeCorrections, undefined, correctionsContents),
      );
      await explain('delta of 1,000 corrections, P1D', delta(beforeCorrections, 86_400, correctionsContents));
    });
    correctedCount = c.updated;
    return [
      ...seriesKinds,
      ...deltaKinds('1,000 corrections', beforeCorrections, correctionsContents, 1000, 1000),
    ];
  };

  const phase3 = async (): Promise<Kind[]> => {
    // Phase 3: a status change of 2,880 rows (two days of one tube), as `gwapi measurements status` makes it.
    const beforeApproval = await point();
    const approved = await setStatus(
      writer,
      [fixture.identifier],
      { from: instantOf(minute(10_000)), to: instantOf(minute(12_880)) },
      'approved',
    );
    await sql`vacuum analyze measurements`;
    const series2880: Select = {
      text: seriesSelect(fixture.tubeId, minute(20_000), minute(22_880)),
      aggregated: false,
    };
    const approvalToken = issueSyncToken(beforeApproval, 'bench', secret);
    const approvalContents = await contentsOf(requestOf(beforeApproval));
    const approvedOnly = { statuses: [0] };
    const approvedOnlyContents = await contentsOf(requestOf(beforeApproval, approvedOnly));
    const approvalDelta = (request: Partial<ChangedMeasurements>, contents: DeltaContents): Select => ({
      text: changedMeasurementsSelect({ ...requestOf(beforeApproval, request), contents }),
      aggregated: false,
    });
    explained.push(() =>
      explain('delta of 2,880 approved', approvalDelta({}, approvalContents)).then(() => {}),
    );
    approvedCount = approved;
    return [
      { label: 'series, 2,880 rows', run: () => viaSource(sql, series2880), expected: 2880 },
      {
        label: 'series, 2,880 rows, HTTP',
        run: seriesRequest(minute(20_000), minute(22_880)),
        expected: 200,
      },
      {
        label: 'delta, 2,880 approved',
        run: () => viaSource(sql, approvalDelta({}, approvalContents)),
        expected: 2880,
      },
      { label: 'delta, 2,880 approved, whole', run: () => wholeDelta(approvalToken), expected: 2880 },
      { label: 'delta, 2,880 approved, HTTP', run: deltaRequest(beforeApproval), expected: 200 },
      {
        label: 'delta, 2,880 approved, status=approved',
        run: () => viaSource(sql, approvalDelta(approvedOnly, approvedOnlyContents)),
        expected: 2880,
      },
      {
        label: 'delta, 2,880 approved, status=approved, whole',
        run: () => wholeDelta(approvalToken, approvedOnly),
        expected: 2880,
      },
      {
        label: 'delta, 2,880 approved, status=approved, HTTP',
        run: deltaRequest(beforeApproval, '&status=approved'),
        expected: 200,
      },
    ];
  };

  let appendedCount = 0;
  let correctedCount = 0;
  let approvedCount = 0;
  let correctionsPlan: string[] = [];
  /** The plans, read after the phases' runs (a plan read mid-phase would warm what the runs read). */
  const explained: (() => Promise<void>)[] = [];
  async function report() {
    for (const read of explained) await read();
    console.log(
      `${engineName}: appended: ${appendedCount} inserted, then ${RUNS} runs of each read; corrections: ` +
        `${correctedCount} updated, then ${RUNS} runs of each (the series in both: ${RUNS * 2} runs); ` +
        `status change: ${approvedCount} approved\n`,
    );

    const medianOf = (label: string) => median(times.get(timesKey(engine, label))!);
    printTable(
      ['read', 'median', 'quartiles'],
      [...times]
        .filter(([key]) => key.startsWith(`${engine}|`))
        .map(([key, runs]) => {
          const label = key.slice(key.indexOf('|') + 1);
          const [low, high] = quartiles(runs);
          return [label, ms(medianOf(label)), `${ms(low)} – ${ms(high)}`];
        }),
    );
    const vs = (label: string, over: string) => ratio(medianOf(label) / medianOf(over));
    // "whole": the request's database work; "HTTP": the requests as a client sends them, against the
    // series' request.
    const both = (label: string, over: string) => [
      vs(label, over),
      vs(`${label}, whole`, over),
      vs(`${label}, HTTP`, `${over}, HTTP`),
    ];
    printTable(
      ['ratio of medians', 'select alone', 'whole', 'HTTP'],
      [
        ['delta of 1,000 appended / series of 1,000', ...both('delta, 1,000 appended', 'series, 1,000 rows')],
        [
          'delta of 1,000 corrections / series of 1,000',
          ...both('delta, 1,000 corrections', 'series, 1,000 rows'),
        ],
        ['delta of 2,880 approved / series of 2,880', ...both('delta, 2,880 approved', 'series, 2,880 rows')],
        [
          'the same, status=approved',
          ...both('delta, 2,880 approved, status=approved', 'series, 2,880 rows'),
        ],
      ],
    );

    const [size] = await sql<{ heap: number; index: number; rows: number }[]>`
    select pg_relation_size('measurement_changes')::float8 as heap,
           pg_relation_size('measurement_changes_xid')::float8 as index,
           (select count(*) from measurement_changes)::float8 as rows`;
    console.log(
      `change log: ${count(size!.rows)} rows, heap ${count(size!.heap)} B, index ${count(size!.index)} B ` +
        `(${(size!.heap / size!.rows).toFixed(1)} and ${(size!.index / size!.rows).toFixed(1)} B a row, pages included)\n`,
    );

    console.log(`${serverTimes.join('\n')}\n`);

    // What the delta reads of the change log: the rows since the token, not the year of history.
    const lines = correctionsPlan;
    console.log('EXPLAIN ANALYZE of the corrections delta: its two index scans');
    for (const [i, line] of lines.entries()) {
      if (/Index (Only )?Scan|Execution/.test(line))
        console.log(`  ${line.trim()}\n    ${lines[i + 1]?.trim() ?? ''}`);
    }
  }
  return { phases: [phase1, phase2, phase3], report };
}
