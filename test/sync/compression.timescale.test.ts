/**
 * TimescaleDB's compression against documents, sync tokens and validators, on native TimescaleDB, each
 * interleaving forced: a document's snapshot and plan are taken, its body waits (the hook a bulk
 * document's turn uses, between the plan and the first row), and meanwhile a change commits and the
 * compression job (`call run_job`) or `compress_chunk` compresses, or recompresses, the
 * chunks it reads. The body must be what its snapshot held, a delta since its token must hold exactly
 * what changed after it, and imports and corrections that meet a compression must all commit.
 *
 * Each fails on the naive design: without the document's lock before its snapshot, a compression
 * commits before the body reads the chunk and the body holds rows written after its snapshot (the
 * compressed rows are frozen: every snapshot sees them); with TimescaleDB's default recompression,
 * segment by segment, the body misses the corrected segments' rows (migration 013). On a hot standby of
 * its own, the replayed compression ends a held document instead of changing what it reads.
 *
 * The job gives up on a chunk a document holds after its lock_timeout (migration 014), so documents
 * that begin while it waits are not held up behind it; the interleavings where a compression commits
 * after a held document are forced with a job that waits for as long as it takes.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { connect, type Sql } from '../../src/db/connect.js';
import { MIGRATION_LOCK_TIMEOUT_MS } from '../../src/db/migrate.js';
import { parseInstant } from '../../src/domain/datetime.js';
import { type DocumentPlan, openDocument } from '../../src/engine/document.js';
import { measurementsSelect, shapeOf } from '../../src/engine/read/selects.js';
import { seriesHead } from '../../src/engine/read/tubes.js';
import type { SeriesWriter } from '../../src/engine/write/writer.js';
import { setStatus } from '../../src/importers/measurements/corrections.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { upsertRegistry } from '../../src/importers/registry/registry.js';
import { currentSyncPoint } from '../../src/sync/sql.js';
import type { SyncPoint } from '../../src/sync/token.js';
import { addKey } from '../../testkit/fixtures.js';
import { startTimescale } from '../../testkit/timescale.js';
import { startApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase, timescaleServerOrSkip } from '../helpers/database.js';
import { get } from '../helpers/http.js';
import { csvOf, heldImport, OTHER, TUBE, TWO_TUBES } from '../helpers/importFixtures.js';
import { seededRandom } from '../helpers/random.js';
import { ALL, syncDelta } from '../helpers/sync.js';
import { until } from '../helpers/until.js';

// Two 30-day chunks (their boundary is 2020-01-09), old enough for the job's 180 days.
const FROM = '2020-01-01T00:00:00Z';
const TO = '2020-01-21T00:00:00Z';
const HOURS = 20 * 24;
/** TUBE's rows end a day before TO: an import of later rows takes the direct path. */
const TUBE_HOURS = 19 * 24;
const TUBE_END = '2020-01-20T00:00:00Z';
const JOB = 'compression test job';

/** `count` CSV rows of `tube`, one an hour from `start`, value: the hour's index + `offset`. */
const hourRows = (tube: string, start: string, count: number, offset = 0) =>
  Array.from(
    { length: count },
    (_, i) => `${tube},${new Date(Date.parse(start) + i * 3_600_000).toISOString()},${i + offset}`,
  );

/** One line per row: `tube observedAt value`, as syncDelta writes them. */
const rowLines = (): SeriesWriter => ({
  head: () => Buffer.alloc(0),
  batch(rows) {
    let text = '';
    for (let i = 0; i < rows.length; i++) {
      text += `${rows.tube[i]} ${new Date(rows.observedAt[i]! / 1000).toISOString()} ${rows.value[i]}\n`;
    }
    return Buffer.from(text);
  },
  close: () => Buffer.alloc(0),
});

interface Fixture {
  db: TestDatabase;
  sql: Sql;
  /** A session opened after the migrations, as the job's background worker opens one. */
  job: Sql;
  jobId: number;
  tubeIds: number[];
  load(lines: string[]): Promise<unknown>;
}

/**
 * `outwaits`: the job waits for a lock until it is free, as every compression did before the job's own
 * lock_timeout (migration 014), so that the interleavings of a compression that commits after a held
 * document are forced; the migrated lock_timeout gives up on a held chunk instead.
 */
async function fixture(t: Test, server: string, { outwaits = true } = {}): Promise<Fixture> {
  const db = await freshDatabase(t, { server });
  const { sql } = db;
  await upsertRegistry(sql, TWO_TUBES);
  let imports = 0;
  const load = (lines: string[]) =>
    importMeasurements(sql, Readable.from([csvOf(lines)]), { name: `import ${++imports}.csv` });
  await load([...hourRows(TUBE, FROM, TUBE_HOURS), ...hourRows(OTHER, FROM, HOURS, 1000)]);
  const job = connect(db.url, { max: 1, applicationName: JOB });
  t.teardown(() => job.end({ timeout: 1 }));
  const [policy] = await sql<{ id: number }[]>`
    select job_id as id from timescaledb_information.jobs where proc_name = 'compress_measurements'`;
  if (outwaits) {
    await sql`select alter_job(${policy!.id}, config => config || '{"lock_timeout": "0"}')
              from timescaledb_information.jobs where job_id = ${policy!.id}`;
  }
  const ids = await sql<{ id: number }[]>`select id from tubes order by identifier`;
  return { db, sql, job, jobId: policy!.id, tubeIds: ids.map((row) => row.id), load };
}

/** Ways the chunks get compressed: the compression job, and by hand. */
const byJob = (f: Fixture): Promise<unknown> => f.job`call run_job(${f.jobId})`.execute();
const byHand = (f: Fixture): Promise<unknown> =>
  f.job`select compress_chunk(c, true) from show_chunks('measurements') c`.execute();
const compressions = { 'the compression job': byJob, compress_chunk: byHand };

const chunkStates = (f: Fixture) =>
  f.sql<{ compressed: boolean; partial: boolean }[]>`
    select c.compressed_chunk_id is not null as compressed, c.status & 8 = 8 as partial
    from _timescaledb_catalog.chunk c join _timescaledb_catalog.hypertable h on h.id = c.hypertable_id
    where h.table_name = 'measurements' order by c.id`;

/**
 * A document of both tubes over [FROM, TO) with its sync token, whose body waits after its plan (its
 * snapshot taken, no row read) until `resume`.
 */
function heldDocument(f: Fixture, to = TO, sql = f.sql) {
  const interval = { from: FROM, to };
  let planned!: () => void;
  const isPlanned = new Promise<void>((resolve) => (planned = resolve));
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => (resume = resolve));
  let waited = false;
  const opened = openDocument(
    sql,
    {
      interval,
      async plan(pool, tx) {
        const select = await measurementsSelect(pool, tx, f.tubeIds, interval);
        const token = await currentSyncPoint(tx, ALL);
        const document: DocumentPlan = {
          everyTube: true,
          tubes: f.tubeIds.map((_, i) => seriesHead({ unit: 'm', verticalDatum: 'NAP' }, `t${i}`, interval)),
          select,
          shape: shapeOf(undefined),
        };
        return { document, token };
      },
      async beforeChunk() {
        if (waited) return;
        waited = true;
        planned();
        await resumed;
      },
    },
    rowLines(),
  );
  const read = opened.then(async (document) => {
    const chunks: Buffer[] = [];
    for await (const chunk of document!.body) chunks.push(chunk as Buffer);
    return { body: Buffer.concat(chunks).toString(), token: document!.plan.token as SyncPoint };
  });
  return { isPlanned, resume, read };
}

/** The document read now, at once: its body and its token. */
function readNow(f: Fixture, to = TO) {
  const held = heldDocument(f, to);
  held.resume();
  return held.read;
}

const wholeBody = async (f: Fixture, to = TO) => (await readNow(f, to)).body;

/**
 * Until the job's session waits for a lock (the document's, or a writer's), or the compression is
 * over: on a design whose documents hold no lock, it is, and the body then shows it.
 */
async function jobWaitsForLock(f: Fixture, compressing: Promise<unknown>) {
  let over = false;
  void compressing.then(
    () => (over = true),
    () => (over = true),
  );
  await until(
    'the compression waits for a lock, or is over',
    async () =>
      over ||
      (
        await f.sql<{ wait: string | null }[]>`
        select wait_event_type as wait from pg_stat_activity where application_name = ${JOB}`
      )[0]?.wait === 'Lock',
    (done) => done,
  );
}

/** Copy + delta: each delta line replaces (or adds) the copy's line of the same tube and instant. */
function applyDelta(copy: string, delta: string[]): string {
  const rows = new Map(
    copy
      .split('\n')
      .filter(Boolean)
      .map((line) => [line.split(' ', 2).join(' '), line]),
  );
  for (const line of delta) rows.set(line.split(' ', 2).join(' '), line);
  const order = (line: string) => {
    const [tube, at] = line.split(' ');
    return `${tube!.padStart(4, '0')} ${at}`;
  };
  return [...rows.values()]
    .sort((a, b) => order(a).localeCompare(order(b)))
    .map((line) => `${line}\n`)
    .join('');
}

const server = timescaleServerOrSkip(t);
if (server) {
  for (const [how, compress] of Object.entries(compressions)) {
    t.test(`${how}: a first compression after the plan, before the body`, async (t) => {
      const f = await fixture(t, server);
      const before = await wholeBody(f);
      t.equal(before.split('\n').length - 1, TUBE_HOURS + HOURS, 'the whole fixture');
      const held = heldDocument(f);
      await held.isPlanned;
      // A re-import that corrects one row of OTHER in the second chunk, after the document's snapshot.
      await f.load(hourRows(OTHER, '2020-01-15T00:00:00Z', 1, -5000));
      const compressing = compress(f);
      await jobWaitsForLock(f, compressing);
      t.same(
        (await chunkStates(f)).map((c) => c.compressed),
        [false, false],
        'nothing compressed while the document holds the chunks',
      );
      held.resume();
      const { body, token } = await held.read;
      t.equal(body, before, 'the body is its snapshot’s, byte for byte');
      await compressing;
      t.same(
        (await chunkStates(f)).map((c) => c.compressed),
        [true, true],
        'compressed once the document is over',
      );
      const delta = await syncDelta(f.sql, token, f.tubeIds, { from: FROM, to: TO });
      t.same(delta.rows, ['1 2020-01-15T00:00:00.000Z -5000'], 'the delta: the correction, once');
      t.equal(applyDelta(body, delta.rows), await wholeBody(f), 'copy and delta: a full read now');
    });

    t.test(`${how}: a recompression after a correction, between the plan and the body`, async (t) => {
      const f = await fixture(t, server);
      await compress(f);
      // A correction into the compressed chunks: their corrected segments are decompressed.
      await f.load(hourRows(TUBE, '2020-01-05T00:00:00Z', 1, -1000));
      await f.load(hourRows(OTHER, '2020-01-15T00:00:00Z', 1, -2000));
      t.same(
        (await chunkStates(f)).map((c) => c.partial),
        [true, true],
        'both chunks partly uncompressed',
      );
      const before = await wholeBody(f);
      const held = heldDocument(f);
      await held.isPlanned;
      await f.load(hourRows(TUBE, '2020-01-16T00:00:00Z', 1, -3000));
      const compressing = compress(f);
      await jobWaitsForLock(f, compressing);
      held.resume();
      const { body, token } = await held.read;
      t.equal(body, before, 'the body is its snapshot’s, byte for byte: no segment missing, none newer');
      await compressing;
      t.same(
        await chunkStates(f),
        [
          { compressed: true, partial: false },
          { compressed: true, partial: false },
        ],
        'recompressed once the document is over',
      );
      const delta = await syncDelta(f.sql, token, f.tubeIds, { from: FROM, to: TO });
      t.same(delta.rows, ['0 2020-01-16T00:00:00.000Z -3000'], 'the delta: the later correction, once');
      t.equal(applyDelta(body, delta.rows), await wholeBody(f), 'copy and delta: a full read now');
    });
  }

  t.test('the job gives up on a chunk a document holds, so later documents do not wait', async (t) => {
    const f = await fixture(t, server, { outwaits: false });
    const before = await wholeBody(f);
    const held = heldDocument(f);
    await held.isPlanned;
    const compressing = byJob(f);
    await jobWaitsForLock(f, compressing);
    // A later document of the same chunks: its locks queue behind the job's, each for at most the
    // job's lock_timeout (once per chunk); the margin is the read itself on a loaded machine.
    const bound = 2 * MIGRATION_LOCK_TIMEOUT_MS + 5000;
    const started = performance.now();
    const later = await Promise.race([wholeBody(f), sleep(bound).then(() => undefined)]);
    t.equal(later, before, 'a later document is answered while the held one still holds the chunks');
    t.comment(`the later document waited ${Math.round(performance.now() - started)} ms`);
    const over = await Promise.race([compressing.then(() => true), sleep(bound).then(() => false)]);
    t.ok(over, 'the job’s run is over while the document holds the chunks');
    t.same(
      (await chunkStates(f)).map((c) => c.compressed),
      [false, false],
      'the run left the held chunks as they were',
    );
    held.resume();
    t.equal((await held.read).body, before, 'the held body is its snapshot’s, byte for byte');
    await compressing;
    await byJob(f);
    t.same(
      (await chunkStates(f)).map((c) => c.compressed),
      [true, true],
      'the next run, with no document holding them, compresses both chunks',
    );
  });

  t.test('a token, a compression and a recompression, then a delta: nothing', async (t) => {
    const f = await fixture(t, server);
    const { body, token } = await readNow(f);
    await byJob(f);
    await f.load(hourRows(TUBE, FROM, 1));
    t.same(
      (await syncDelta(f.sql, token, f.tubeIds, { from: FROM, to: TO })).rows,
      [],
      'neither compressing nor an import that changes nothing is a change',
    );
    await f.load(hourRows(TUBE, '2020-01-03T00:00:00Z', 1, -7000));
    await byJob(f);
    const delta = await syncDelta(f.sql, token, f.tubeIds, { from: FROM, to: TO });
    t.same(delta.rows, ['0 2020-01-03T00:00:00.000Z -7000'], 'the correction alone, recompressed');
    t.equal(applyDelta(body, delta.rows), await wholeBody(f), 'copy and delta: a full read now');
  });

  t.test('imports and corrections that meet a compression all commit, in either order', async (t) => {
    const f = await fixture(t, server);
    const copy = await readNow(f);

    // The compression first: it holds the first chunk while it waits for a document, and a status
    // change of that chunk waits for it, while an import of the other chunk goes on.
    const held = heldDocument(f);
    await held.isPlanned;
    const compressing = byJob(f);
    await jobWaitsForLock(f, compressing);
    const importing = f.load(hourRows(OTHER, '2020-01-12T00:00:00Z', 2, -100));
    const firstDay = { from: parseInstant(FROM), to: parseInstant('2020-01-02T00:00:00Z') };
    const correcting = setStatus(f.sql, [TUBE], firstDay, 'approved');
    await until(
      'the status change waits for the compression',
      () => f.sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and application_name <> ${JOB}`,
      (rows) => rows[0]!.waiting >= 1,
    );
    held.resume();
    await held.read;
    const settled = await Promise.allSettled([compressing, importing, correcting]);
    t.same(
      settled.map((s) => s.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
      'the compression, the import and the status change all commit',
    );
    t.equal((settled[2] as PromiseFulfilledResult<number>).value, 24, 'the status change changed its day');

    // The import first: new rows after the stored ones go straight into the (decompressed) chunk, and
    // the import holds its transaction open while the compression starts.
    await f.job`select decompress_chunk(c) from show_chunks('measurements', newer_than => '2020-01-10'::timestamptz) c`;
    const open = heldImport(f.sql, hourRows(TUBE, TUBE_END, 4, -200));
    await open.holding;
    const compressingAgain = byHand(f);
    await jobWaitsForLock(f, compressingAgain);
    open.release();
    const again = await Promise.allSettled([open.done, compressingAgain]);
    t.same(
      again.map((s) => s.status),
      ['fulfilled', 'fulfilled'],
      'the held import commits, and the compression after it',
    );
    t.same(
      (await chunkStates(f)).map((c) => c.compressed),
      [true, true],
      'both chunks compressed in the end',
    );

    const delta = await syncDelta(f.sql, copy.token, f.tubeIds, { from: FROM, to: TO });
    const written = [
      '1 2020-01-12T00:00:00.000Z -100',
      '1 2020-01-12T01:00:00.000Z -99',
      ...[0, 1, 2, 3].map((i) => `0 2020-01-20T0${i}:00:00.000Z ${i - 200}`),
    ];
    t.same(
      written.filter((line) => !delta.rows.includes(line)),
      [],
      'the delta holds both imports’ rows',
    );
    t.equal(applyDelta(copy.body, delta.rows), await wholeBody(f), 'copy and delta: a full read now');
    const [approved] = await f.sql<{ count: number }[]>`
      select count(*)::int as count from measurements where status = 0`;
    t.equal(approved!.count, 24, 'the status change is stored');
  });

  t.test('a chunk created or dropped after the pool listed the chunks', async (t) => {
    const f = await fixture(t, server);
    const later = '2020-03-01T00:00:00Z';
    await byJob(f);
    await readNow(f, later);
    // A chunk the list lacks, the one the job compresses next: the document finds its list behind,
    // lists again and locks it too.
    await f.load(hourRows(OTHER, '2020-02-15T00:00:00Z', 24, 1000));
    const before = await wholeBody(f, later);
    t.match(before, /1 2020-02-15T23:00:00.000Z 1023\n/, 'the new chunk’s rows are read');
    const held = heldDocument(f, later);
    await held.isPlanned;
    await f.load(hourRows(OTHER, '2020-02-15T00:00:00Z', 1, -9000));
    const compressing = byJob(f);
    await jobWaitsForLock(f, compressing);
    held.resume();
    t.equal((await held.read).body, before, 'the body is its snapshot’s, the new chunk’s rows too');
    await compressing;
    t.same(
      (await chunkStates(f)).map((c) => c.compressed),
      [true, true, true],
      'the three chunks compressed after it',
    );
    // A chunk the list holds that is gone: its lock fails, and the document lists again.
    await f.job`select drop_chunks('measurements', older_than => '2020-01-09T00:00:00Z'::timestamptz)`;
    const after = await wholeBody(f, later);
    t.notMatch(after, /2020-01-08/, 'the dropped chunk’s rows are gone');
    t.match(after, /0 2020-01-09T00:00:00.000Z 192\n/, 'the next chunk’s are read');
  });

  // Not an interleaving forced, but all of them at random: documents that wait a little after their
  // plan, beside a writer and a compressor that never stop. Each copy and the delta since its token must
  // be a full read at the end. The naive designs fail it in most runs, not all: the tests above are the
  // proof, this one the check that nothing else falls between them.
  t.test('under load: documents, imports, corrections and compressions at once', async (t) => {
    const f = await fixture(t, server);
    await byJob(f);
    const ROUNDS = 12;
    const random = seededRandom(36);
    const hour = (n: number) => new Date(Date.parse(FROM) + n * 3_600_000).toISOString();
    let writing = true;
    const writes = (async () => {
      for (let i = 0; writing; i++) {
        const tube = random() < 0.5 ? TUBE : OTHER;
        await f.load([`${tube},${hour(Math.floor(random() * TUBE_HOURS))},${-i - 1}`]);
      }
    })();
    const compressing = (async () => {
      for (let i = 0; writing; i++) await (i % 2 ? byHand(f) : byJob(f));
    })();
    // Each document waits a little between its plan and its rows, as a bulk document's turns do.
    const documents = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const read: { body: string; token: SyncPoint }[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          const held = heldDocument(f);
          await held.isPlanned;
          await sleep(random() * 300);
          held.resume();
          read.push(await held.read);
        }
        return read;
      }),
    );
    writing = false;
    await Promise.all([writes, compressing]);
    const whole = await wholeBody(f);
    const [recompressions] = await f.sql<{ count: number }[]>`
      select count(*)::int as count from measurement_corrections`;
    t.ok(recompressions!.count > 0, `${recompressions!.count} corrections met the compressions`);
    let copies = 0;
    for (const { body, token } of documents.flat()) {
      t.equal(body.split('\n').length - 1, TUBE_HOURS + HOURS, 'every row in the copy');
      const delta = await syncDelta(f.sql, token, f.tubeIds, { from: FROM, to: TO });
      if (applyDelta(body, delta.rows) === whole) copies++;
      else t.fail('a copy and its delta are not a full read');
    }
    t.equal(copies, 4 * ROUNDS, `each of ${4 * ROUNDS} copies and its delta is a full read now`);
  });

  t.test('on a hot standby: a compression replayed under a document ends the document', async (t) => {
    const timescale = await startTimescale({
      standbys: 1,
      owner: t,
      settings: { max_standby_streaming_delay: "'500ms'" },
    });
    const f = await fixture(t, timescale.url);
    const standby = timescale.cluster.standbys[0]!;
    const onStandby = connect(standby.url.replace(/\/postgres$/, `/${f.db.name}`), { max: 2 });
    t.teardown(() => onStandby.end({ timeout: 1 }));
    await timescale.cluster.caughtUp(standby);
    const before = await (async () => {
      const held = heldDocument(f, TO, onStandby);
      held.resume();
      return (await held.read).body;
    })();
    t.equal(before, await wholeBody(f), 'the standby reads what the primary holds');
    const held = heldDocument(f, TO, onStandby);
    await held.isPlanned;
    await f.load(hourRows(OTHER, '2020-01-15T00:00:00Z', 1, -5000));
    await byJob(f);
    // The replay of the compression's ACCESS EXCLUSIVE waits for the document's lock, then ends it.
    await timescale.cluster.caughtUp(standby);
    held.resume();
    const read = await held.read.then(
      ({ body }) => body,
      (error: unknown) => error,
    );
    t.same(
      read instanceof Error ? { failed: (read as { code?: string }).code } : { body: read },
      { failed: 'CONNECTION_CLOSED' },
      'the standby ended the document’s session before its first row: a read tried again, not another state',
    );
  });

  t.test('validators before and after compression, with no change of content', async (t) => {
    const db = await freshDatabase(t, { server });
    await upsertRegistry(db.sql, TWO_TUBES);
    await importMeasurements(
      db.sql,
      Readable.from([csvOf([...hourRows(TUBE, FROM, HOURS), ...hourRows(OTHER, FROM, HOURS)])]),
      { name: 'fixture.csv' },
    );
    const api = await startApi(t, { db });
    const ids = await db.sql<{ id: number }[]>`select id from tubes order by identifier`;
    const { key } = await addKey(db.sql, { tubeIds: ids.map((row) => row.id) });
    const query = `from=${FROM}&to=${TO}`;
    const paths = {
      series: `/v1/groundwater-monitoring-tubes/${TUBE}/measurements?${query}`,
      network: `/v1/groundwater-monitoring-measurements?${query}`,
      'aggregated series': `/v1/groundwater-monitoring-tubes/${TUBE}/measurements?${query}&aggregate=P1D`,
    };
    const read = async () => {
      const answers: Record<string, { etag: unknown; lastModified: unknown; body: string }> = {};
      for (const [name, path] of Object.entries(paths)) {
        const response = await get(api.base, path, { 'x-api-key': key });
        t.equal(response.status, 200, name);
        answers[name] = {
          etag: response.headers.etag,
          lastModified: response.headers['last-modified'],
          // The network's token names its own snapshot: every other byte must be the same.
          body: response.body.replace(/"syncToken":"[^"]*"/, ''),
        };
      }
      return answers;
    };
    const uncompressed = await read();
    const job = connect(db.url, { max: 1 });
    t.teardown(() => job.end({ timeout: 1 }));
    const [policy] = await job<{ id: number }[]>`
      select job_id as id from timescaledb_information.jobs where proc_name = 'compress_measurements'`;
    await job`call run_job(${policy!.id})`;
    const [state] = await db.sql<{ compressed: number }[]>`
      select count(*)::int as compressed from timescaledb_information.chunks
      where hypertable_name = 'measurements' and is_compressed`;
    t.equal(state!.compressed, 2, 'both chunks compressed');
    const compressed = await read();
    t.same(compressed, uncompressed, 'the same validators and the same bytes');
    for (const [name, path] of Object.entries(paths)) {
      const conditional = await get(api.base, path, {
        'x-api-key': key,
        'if-none-match': String(uncompressed[name]!.etag),
      });
      t.equal(conditional.status, 304, `${name}: 304 for the tag read before compression`);
    }
  });
}
