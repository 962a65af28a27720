/**
 * openSeries in process, against a real PostgreSQL: a long series streams without leaving its
 * rows behind in V8's old generation, so the server's memory does not grow with the length of the
 * series (`npm run bench -- memory` measures the resident memory of a real server; this pins down the cause).
 * (Until 1.1.0 the rows were objects of FETCH results, promoted unless each batch was emptied once
 * written; since 1.2 they are typed-array columns, and the test still holds the stream to it.)
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { setImmediate as tick } from 'node:timers/promises';
import t from 'tap';
import { connect } from '../../src/db/connect.js';
import { json } from '../../src/engine/write/json.js';
import type { Client } from '../../src/keys/clients.js';
import { addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { freshDatabase } from '../helpers/database.js';
import { oldGenerationMb } from '../helpers/heap.js';
import { seededRandom } from '../helpers/random.js';
import { openSeries } from '../helpers/series.js';

const FROM = '2024-01-01T00:00:00Z';
/** 120 days of 1-minute data: 172,800 measurements, ~9 MB of JSON, ~86 batches. */
const TO = '2024-04-30T00:00:00Z';

t.test('a long series leaves no rows behind in the old generation', async (t) => {
  const db = await freshDatabase(t);
  const [tube] = await addWell(db.sql, 'Long', [{ number: '1' }]);
  await addRegularSeries(db.sql, tube!.id, FROM, TO, '1 minute');
  const sql = connect(db.url, { max: 2 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const client: Client = { keyId: 'test', allTubes: true, grants: new Set() };

  async function drain(to: string): Promise<number> {
    const stream = await openSeries(
      sql,
      { client, tubeIdentifier: tube!.identifier, from: FROM, to },
      json.series(),
    );
    let bytes = 0;
    for await (const chunk of stream!) bytes += (chunk as Buffer).length;
    return bytes;
  }
  // Warm-up, as a server that has run for a while: compiled code, the driver's statement, the pool.
  for (let i = 0; i < 3; i++) await drain(TO);

  let fullCollections = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const { detail } = entry as PerformanceEntry & { detail?: { kind?: number } };
      if (detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullCollections++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  t.teardown(() => observer.disconnect());

  // A full collection during the stream would hide promoted rows (it frees them), so an attempt with
  // one says nothing and is repeated. Rows left behind fail either way: they grow the old generation
  // or, past V8's limit, make it collect in every attempt.
  const attempts = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    fullCollections = 0;
    const before = oldGenerationMb();
    const bytes = await drain(TO);
    const grown = oldGenerationMb() - before;
    await tick(); // GC entries are delivered asynchronously
    attempts.push({ bytes, grown, fullCollections });
    if (fullCollections === 0) break;
  }
  const measured = attempts.find((attempt) => attempt.fullCollections === 0);
  if (!measured) {
    t.fail(`a full collection ran during every attempt: ${JSON.stringify(attempts)}`);
    return;
  }
  t.ok(measured.bytes > 9_000_000, `the series was streamed (${measured.bytes} bytes)`);
  t.ok(measured.grown < 4, `old generation grew by ${measured.grown.toFixed(1)} MB (less than 4 MB)`);
});

t.test("values come out as JavaScript writes them, whatever PostgreSQL's text of them", async (t) => {
  const db = await freshDatabase(t);
  const [tube] = await addWell(db.sql, 'Values', [{ number: '1' }]);
  // Decimals of up to 15 significant digits at every magnitude the format switches at (PostgreSQL
  // writes an exponent below 1e-4 and from 1e15, JavaScript below 1e-6 and from 1e21), and doubles
  // that are no short decimal at all.
  const values: number[] = [
    0,
    -0,
    -0.001,
    1e-7,
    1e-5,
    1e-4,
    123456789012345,
    1e15,
    1e20,
    1e21,
    0.1 + 0.2,
    2 / 3,
  ];
  const random = seededRandom(42);
  while (values.length < 5000) {
    const magnitude = 10 ** Math.floor(random() * 30 - 10);
    const digits = 1 + Math.floor(random() * 15);
    values.push(Number(((random() - 0.5) * magnitude).toPrecision(digits)), (random() - 0.5) * magnitude);
  }
  // As text, so that -0 arrives as -0 (String(-0) is "0"); every other text reads back exactly.
  const texts = values.map((value) => (Object.is(value, -0) ? '-0' : String(value)));
  await db.sql`
    insert into measurements (tube_id, observed_at, value)
    select ${tube!.id}, timestamptz '2024-01-01' + (n - 1) * interval '1 second', v::float8
    from unnest(${texts}::text[]) with ordinality as x(v, n)`;
  // A database that rounds its float output (extra_float_digits ≤ 0; 1 is the default): the series
  // must not depend on that setting.
  await db.sql`alter database ${db.sql(db.name)} set extra_float_digits = -3`;
  const sql = connect(db.url, { max: 1 });
  t.teardown(() => sql.end({ timeout: 1 }));
  const [rounding] = await sql`select current_setting('extra_float_digits') as setting`;
  t.equal(rounding?.setting, '-3', 'the connection rounds floats');
  const client: Client = { keyId: 'test', allTubes: true, grants: new Set() };
  const stream = await openSeries(
    sql,
    {
      client,
      tubeIdentifier: tube!.identifier,
      from: '2024-01-01T00:00:00Z',
      to: '2024-01-02T00:00:00Z',
    },
    json.series(),
  );
  let body = '';
  for await (const chunk of stream!) body += (chunk as Buffer).toString();
  const written = [...body.matchAll(/"value":([^}]*)\}/g)].map((match) => match[1]);
  t.same(
    written,
    values.map((value) => JSON.stringify(value)),
    'every value byte for byte as JSON.stringify writes it',
  );
});
