/**
 * The buckets of an aggregated series on both storages: date_bin on the suite's plain PostgreSQL and
 * time_bucket on native TimescaleDB (testkit/timescale.ts), read as the endpoint reads them
 * (bucketFunctionOf, aggregateSelect, binary COPY), against a reference computed here from the same
 * random measurements: bucket starts, mean, min, max and count.
 */
import fc from 'fast-check';
import t from 'tap';
import { AGGREGATE_SECONDS, AGGREGATES, type Aggregate } from '../../src/contract.js';
import type { Sql } from '../../src/db/connect.js';
import { formatInstant, type Instant } from '../../src/domain/datetime.js';
import { readBatches } from '../../src/engine/read/binaryCopy.js';
import { aggregateSelect, bucketFunctionOf } from '../../src/engine/read/selects.js';
import { instantText, numberText } from '../../src/engine/write/text.js';
import { addMeasurements, addWell } from '../../testkit/fixtures.js';
import { freshDatabase, timescaleServerOrSkip } from '../helpers/database.js';

const MICROS = 1_000_000n;
const instant = (at: bigint): Instant => {
  const seconds = at / MICROS - (at % MICROS < 0n ? 1n : 0n);
  return { seconds: Number(seconds), micros: Number(at - seconds * MICROS) };
};

/** A bucket as text: its start as the API writes it, and its numbers as the JSON writes them. */
interface AggregateRow {
  observedAt: string;
  value: string;
  min: string;
  max: string;
  count: string;
}

interface Measured {
  at: bigint;
  /** Decimal text as an import stores it. */
  value: string;
}

/** The buckets the contract defines, computed here: summed in time order, as the mean is specified. */
function reference(measured: Measured[], from: bigint, to: bigint, aggregate: Aggregate): AggregateRow[] {
  const stride = BigInt(AGGREGATE_SECONDS[aggregate]) * MICROS;
  const buckets = new Map<bigint, number[]>();
  for (const { at, value } of [...measured].sort((a, b) => (a.at < b.at ? -1 : 1))) {
    if (at < from || at >= to) continue;
    const start = from + ((at - from) / stride) * stride;
    buckets.set(start, [...(buckets.get(start) ?? []), Number(value)]);
  }
  return [...buckets].map(([start, values]) => ({
    observedAt: formatInstant(instant(start)),
    value: String(values.reduce((sum, value) => sum + value, 0) / values.length),
    min: String(Math.min(...values)),
    max: String(Math.max(...values)),
    count: String(values.length),
  }));
}

async function buckets(sql: Sql, tubeId: number, from: bigint, to: bigint, aggregate: Aggregate) {
  const rows: AggregateRow[] = [];
  await sql.begin('read only', async (tx) => {
    const select = await aggregateSelect(
      tx,
      tubeId,
      formatInstant(instant(from)),
      formatInstant(instant(to)),
      {
        bucketFunction: await bucketFunctionOf(sql, tx),
        seconds: AGGREGATE_SECONDS[aggregate],
      },
    );
    // Small batches, so that a series crosses several of them.
    for await (const batch of readBatches(tx, select, 'aggregated', 7)) {
      for (let i = 0; i < batch.length; i++) {
        rows.push({
          observedAt: instantText(batch.observedAt[i]!),
          value: numberText(batch.value[i]!),
          min: numberText(batch.min![i]!),
          max: numberText(batch.max![i]!),
          count: numberText(batch.count![i]!),
        });
      }
    }
  });
  return rows;
}

const server = timescaleServerOrSkip(t);
if (server) {
  const tsdb = (await freshDatabase(t, { server })).sql;
  const plain = (await freshDatabase(t)).sql;

  let tubes = 0;
  /** The same tube and measurements on both servers (ids agree: both start from an empty registry). */
  async function addTube(measured: Measured[]): Promise<number> {
    tubes += 1;
    const rows = measured.map(({ at, value }): [string, string] => [formatInstant(instant(at)), value]);
    const ids = await Promise.all(
      [plain, tsdb].map(async (sql) => {
        const [tube] = await addWell(sql, `Well ${tubes}`, [{ number: '1' }]);
        await addMeasurements(sql, tube!.id, rows);
        return tube!.id;
      }),
    );
    if (ids[0] !== ids[1]) throw new Error(`tube ids differ: ${ids.join(' and ')}`);
    return ids[0]!;
  }

  t.test('each database names its own bucket function', async (t) => {
    await tsdb.begin(async (tx) => t.equal(await bucketFunctionOf(tsdb, tx), 'time_bucket'));
    await plain.begin(async (tx) => t.equal(await bucketFunctionOf(plain, tx), 'date_bin'));
  });

  /** 2024-01-01T00:00:00Z. */
  const EPOCH_2024 = 1_704_067_200n * MICROS;

  const caseArb = fc
    .record({
      aggregate: fc.constantFrom(...AGGREGATES),
      // Any microsecond in 2024, so that bucket starts carry fractions too.
      from: fc.bigInt({ min: EPOCH_2024, max: EPOCH_2024 + 365n * 86_400n * MICROS }),
      strides: fc.integer({ min: 1, max: 30 }),
    })
    .chain(({ aggregate, from, strides }) => {
      const stride = BigInt(AGGREGATE_SECONDS[aggregate]) * MICROS;
      const to = from + BigInt(strides) * stride - stride / 3n;
      // Anywhere in [from, to], a stride on either side, exactly on the bounds and on bucket starts.
      const at = fc.oneof(
        fc.bigInt({ min: from - stride, max: to + stride }),
        fc.constantFrom(from, to, to - 1n, from - 1n),
        fc.integer({ min: 0, max: strides }).map((n) => from + BigInt(n) * stride),
      );
      const value = fc
        .tuple(fc.integer({ min: -99_999_999, max: 99_999_999 }), fc.integer({ min: 0, max: 6 }))
        .map(([digits, scale]) => String(digits / 10 ** scale));
      return fc.record({
        aggregate: fc.constant(aggregate),
        from: fc.constant(from),
        to: fc.constant(to),
        measured: fc.uniqueArray(fc.record({ at, value }), {
          selector: (m) => m.at,
          minLength: 1,
          maxLength: 300,
          size: 'large',
        }),
      });
    });

  t.test('time_bucket and date_bin give the buckets the contract defines', async (t) => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ aggregate, from, to, measured }) => {
        const tube = await addTube(measured);
        const expected = reference(measured, from, to, aggregate);
        const onPlain = await buckets(plain, tube, from, to, aggregate);
        const onTimescale = await buckets(tsdb, tube, from, to, aggregate);
        compared += expected.length;
        return t.same(onPlain, expected, 'date_bin') && t.same(onTimescale, expected, 'time_bucket');
      }),
      { numRuns: 40, seed: 16 },
    );
    t.ok(compared > 400, `compared ${compared} buckets`);
  });

  t.test('P7D counts 604,800-second steps from from, not weeks from a Monday', async (t) => {
    // A Thursday noon with microseconds: neither TimescaleDB's default origin (a Monday) nor midnight.
    const from = EPOCH_2024 + 3n * 86_400n * MICROS + 43_200n * MICROS + 123_456n;
    const week = 604_800n * MICROS;
    const measured = [0n, 1n, week - 1n, week, 3n * week + 5n].map((offset, i) => ({
      at: from + offset,
      value: String(i + 0.5),
    }));
    const tube = await addTube(measured);
    const expected = reference(measured, from, from + 4n * week, 'P7D');
    t.same(
      expected.map((row) => [row.observedAt, row.count]),
      [
        ['2024-01-04T12:00:00.123456Z', '3'],
        ['2024-01-11T12:00:00.123456Z', '1'],
        ['2024-01-25T12:00:00.123456Z', '1'],
      ],
      'the reference: empty weeks left out',
    );
    for (const sql of [plain, tsdb])
      t.same(await buckets(sql, tube, from, from + 4n * week, 'P7D'), expected);
  });
}
