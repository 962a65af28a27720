/** Discovery over real HTTP: what a key sees, in what order, and nothing about what it does not. */
import t from 'tap';
import { groupWells } from '../../../src/domain/discoveryOrder.js';
import { addKey, addWell } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get, send } from '../../helpers/http.js';

const WELLS = '/v1/groundwater-monitoring-wells';

t.test('discovery', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  // Inserted out of order, so any order in the response comes from the service.
  const tubesB10 = await addWell(sql, 'Well 10', [{ number: '1' }]);
  const tubesB2 = await addWell(sql, 'Well 2', [
    { number: '10' },
    { number: 'A' },
    { number: '2a' },
    { number: '2' },
    { number: '1' },
    { number: 'b' },
  ]);
  const hiddenWell = await addWell(sql, 'Hidden well', [{ number: '1' }]);
  const mixed = await addWell(sql, 'alpha', [{ number: '3' }, { number: '4' }, { number: '5' }]);
  const all = [...tubesB10, ...tubesB2, ...hiddenWell, ...mixed];
  const everything = await addKey(sql, { allTubes: true });
  // Sees all of Well 2, one tube of alpha (of three), nothing of Hidden well or Well 10.
  const some = await addKey(sql, { tubeIds: [...tubesB2.map((tube) => tube.id), mixed[1]!.id] });
  const none = await addKey(sql);

  t.test('an all-tubes key sees every well and tube, in natural order', async (t) => {
    const response = await get(api.base, WELLS, { 'x-api-key': everything.key, accept: 'application/json' });
    t.equal(response.status, 200);
    t.equal(response.headers['content-type'], 'application/json');
    t.equal(response.headers['api-version'], '1.4.0');
    const wells = JSON.parse(response.body);
    t.same(
      wells.map((w: { name: string }) => w.name),
      ['alpha', 'Hidden well', 'Well 2', 'Well 10'],
    );
    const well2 = wells.find((w: { name: string }) => w.name === 'Well 2');
    t.same(
      well2.tubes.map((tube: { number: string }) => tube.number),
      ['1', '2', '2a', '10', 'A', 'b'],
    );
    const byIdentifier = new Map(all.map((tube) => [tube.identifier, tube.number]));
    for (const well of wells) {
      t.same(Object.keys(well), ['name', 'tubes']);
      for (const tube of well.tubes) {
        t.same(Object.keys(tube), ['identifier', 'number', 'unit', 'verticalDatum']);
        t.equal(byIdentifier.get(tube.identifier), tube.number, 'identifier and number belong together');
      }
    }
    t.equal(wells.flatMap((w: { tubes: unknown[] }) => w.tubes).length, all.length);
  });

  t.test('a key with grants sees only its tubes, and nothing about the others', async (t) => {
    const response = await get(api.base, WELLS, { 'x-api-key': some.key });
    t.equal(response.status, 200);
    const wells = JSON.parse(response.body);
    t.same(wells, [
      {
        name: 'alpha',
        tubes: [{ identifier: mixed[1]!.identifier, number: '4', unit: 'm', verticalDatum: 'NAP' }],
      },
      {
        name: 'Well 2',
        tubes: ['1', '2', '2a', '10', 'A', 'b'].map((number) => ({
          identifier: tubesB2.find((tube) => tube.number === number)!.identifier,
          number,
          unit: 'm',
          verticalDatum: 'NAP',
        })),
      },
    ]);
    for (const hidden of [...hiddenWell, ...tubesB10, mixed[0]!, mixed[2]!]) {
      t.notOk(response.body.includes(hidden.identifier), 'hidden identifier absent');
    }
    t.notOk(response.body.includes('Hidden well'));
    t.notOk(response.body.includes('Well 10'));
    t.notOk(/"number":"[35]"/.test(response.body), 'hidden numbers absent');
  });

  t.test('a key without any tube is 403', async (t) => {
    const response = await get(api.base, WELLS, { 'x-api-key': none.key });
    t.equal(response.status, 403);
    t.equal(response.headers['content-type'], 'application/problem+json');
    t.equal(JSON.parse(response.body).title, 'Forbidden');
  });

  t.test('HEAD gives the headers of GET and no body', async (t) => {
    const getResponse = await get(api.base, WELLS, { 'x-api-key': some.key });
    const head = await send(api.base, 'HEAD', WELLS, { 'x-api-key': some.key });
    t.equal(head.status, 200);
    t.equal(head.body, '');
    t.equal(head.headers['content-type'], 'application/json');
    t.equal(head.headers['content-length'], String(Buffer.byteLength(getResponse.body)));
    const forbidden = await send(api.base, 'HEAD', WELLS, { 'x-api-key': none.key });
    t.equal(forbidden.status, 403);
    t.equal(forbidden.body, '');
  });

  t.test('a query string is ignored', async (t) => {
    const response = await get(api.base, `${WELLS}?from=x&page=2`, { 'x-api-key': some.key });
    t.equal(response.status, 200);
  });
});

t.test('discovery is one query whatever the number of wells', async (t) => {
  const api = await startApi(t);
  const { sql } = api.db;
  await sql`
    with w as (insert into wells (name) select 'W' || i from generate_series(1, 300) i returning id)
    insert into tubes (identifier, well_id, number)
    select gen_random_uuid(), w.id, n::text from w, generate_series(1, 3) n`;
  const key = await addKey(sql, { allTubes: true });
  await get(api.base, WELLS, { 'x-api-key': key.key }); // the key is cached from now on
  // postgres.js calls `debug` once for every statement it sends on this pool.
  let statements = 0;
  api.appSql.options.debug = () => {
    statements++;
  };
  const response = await get(api.base, WELLS, { 'x-api-key': key.key });
  t.equal(response.status, 200);
  t.equal(JSON.parse(response.body).length, 300);
  t.equal(statements, 1, 'one statement for 300 wells');
});

t.test('grouping and natural order, without HTTP', async (t) => {
  const rows = ['10', '9', '1', '02', '2', 'B', 'a', '1b'].map((number, i) => ({
    wellName: i % 2 ? 'x10' : 'x9',
    identifier: `id${i}`,
    number,
  }));
  const wells = groupWells(rows);
  t.same(
    wells.map((w) => w.name),
    ['x9', 'x10'],
  );
  t.same(
    wells.flatMap((w) => w.tubes.map((tube) => tube.number)),
    ['1', '2', '10', 'a', '1b', '02', '9', 'B'],
  );
});
