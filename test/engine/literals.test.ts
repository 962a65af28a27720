/** The SQL literals of the row source's selects: what each writes, and what each refuses. */
import t from 'tap';
import {
  instantLiteral,
  int4ArrayLiteral,
  integerLiteral,
  statusCondition,
} from '../../src/engine/read/literals.js';
import { snapshotLiteral, xid8Literal } from '../../src/sync/literals.js';

t.test('integers and int4 arrays', async (t) => {
  t.equal(integerLiteral(-42), '-42');
  for (const bad of [1.5, Number.NaN, Infinity, 2 ** 53]) t.throws(() => integerLiteral(bad));
  t.equal(int4ArrayLiteral([]), "'{}'::int4[]");
  t.equal(int4ArrayLiteral([3, -1, 2 ** 31 - 1]), `'{3,-1,${2 ** 31 - 1}}'::int4[]`);
  for (const bad of [2 ** 31, -(2 ** 31) - 1, 0.5, Number.NaN]) t.throws(() => int4ArrayLiteral([1, bad]));
});

t.test('status filters', async (t) => {
  t.equal(statusCondition(undefined, 3), undefined, 'no filter, no condition');
  t.equal(statusCondition([2], 3), 'status = 2');
  t.equal(statusCondition([0, 2], 3), 'status <> 1', 'all but one: its complement');
  t.equal(statusCondition([0, 1], 3, 'p.status'), 'p.status <> 2');
  t.equal(statusCondition([0, 1], 4), 'status in (0, 1)');
  t.throws(() => statusCondition([], 3));
  t.throws(() => statusCondition([0.5], 3));
});

t.test('instants', async (t) => {
  t.equal(instantLiteral('2024-01-01T00:00:00.123456Z'), "'2024-01-01T00:00:00.123456Z'::timestamptz");
  for (const bad of ["2024-01-01T00:00:00Z'; drop table x; --", '2024-01-01T00:00:00+01:00', 'now']) {
    t.throws(() => instantLiteral(bad));
  }
});

t.test('transaction ids and snapshots', async (t) => {
  t.equal(xid8Literal(2n ** 64n - 1n), "'18446744073709551615'::xid8");
  for (const bad of [-1n, 2n ** 64n, 5 as unknown as bigint]) t.throws(() => xid8Literal(bad));
  t.equal(snapshotLiteral({ xmin: 10n, xmax: 20n, xip: [] }), "'10:20:'::pg_snapshot");
  t.equal(snapshotLiteral({ xmin: 10n, xmax: 20n, xip: [11n, 15n] }), "'10:20:11,15'::pg_snapshot");
  t.throws(() => snapshotLiteral({ xmin: 10n, xmax: 20n, xip: [-1n] }));
  t.throws(() => snapshotLiteral({ xmin: '1; x' as unknown as bigint, xmax: 20n, xip: [] }));
});
