/**
 * Paging through `measurements` while imports and corrections commit, the interleavings forced: an
 * import whose transaction is open while the first page is read and commits after it; imports before the
 * last feature read (earlier times of its tube, a new well that sorts before every other) and after it;
 * status corrections on both sides; and `limit` changing between pages. Every feature that existed when
 * the first page was read comes exactly once. The control: after each round of writes more features
 * precede the last one read than were read, so a page that started at an offset would repeat some.
 */
import t from 'tap';
import { parseInstant } from '../../../src/domain/datetime.js';
import { setStatus } from '../../../src/importers/measurements/corrections.js';
import { upsertRegistry } from '../../../src/importers/registry/registry.js';
import { addKey } from '../../../testkit/fixtures.js';
import { startApi } from '../../helpers/api.js';
import { get } from '../../helpers/http.js';
import { heldImport, minuteRows, rowImporter } from '../../helpers/importFixtures.js';

const tube = (n: number) => `0d000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const [A, B, C, NEW] = [tube(1), tube(2), tube(3), tube(4)];
const DAY = '2024-01-01T00:00:00Z';
const BEFORE = '2023-12-31T00:00:00Z';
const LATER = '2024-01-02T00:00:00Z';
const ITEMS = '/v1/ogc/collections/measurements/items';

const rows = (identifier: string, start: string, count: number) =>
  minuteRows(identifier, start, count).map((line) => line.split(',') as [string, string, string]);

t.test('paging under imports and corrections: every feature of the first page once', async (t) => {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  await upsertRegistry(sql, [
    {
      name: 'W 2',
      tubes: [
        { identifier: A, number: '1' },
        { identifier: B, number: '2' },
      ],
    },
    { name: 'W 5', tubes: [{ identifier: C, number: '1' }] },
  ]);
  const importRows = rowImporter(sql);
  for (const identifier of [A, B, C]) await importRows(rows(identifier, DAY, 30));
  const { key } = await addKey(sql, { allTubes: true });
  const headers = { 'X-API-Key': key };
  const page = async (path: string) => {
    const response = await get(api.base, path, headers);
    t.equal(response.status, 200, path);
    const body = JSON.parse(response.body);
    const next = body.links.find((link: { rel: string }) => link.rel === 'next');
    return {
      ids: body.features.map((f: { id: string }) => f.id) as string[],
      next: next && new URL(next.href),
    };
  };
  const everything = async () => (await page(`${ITEMS}?limit=50000`)).ids;
  const read: string[] = [];
  /** The control: more features now precede the last one read than have been read. */
  const offsetWouldRepeat = async (what: string) => {
    const now = await everything();
    t.ok(now.indexOf(read.at(-1)!) + 1 > read.length, `${what}: an offset would repeat features`);
  };

  // An import into B (earlier and later times) holds its transaction open across the first page.
  const held = heldImport(sql, [...minuteRows(B, BEFORE, 5), ...minuteRows(B, LATER, 5)]);
  await held.holding;
  const existing = await everything();
  t.equal(existing.length, 90, 'the held import is not there yet');
  const first = await page(`${ITEMS}?limit=10`);
  read.push(...first.ids);
  const next = first.next!;
  held.release();
  await held.done;

  // Before the last feature read: earlier times of its own tube. After it: later times of C.
  await importRows(rows(A, BEFORE, 7));
  await importRows(rows(C, LATER, 4));
  // Corrections on both sides of it.
  await setStatus(
    sql,
    [A],
    { from: parseInstant(DAY), to: parseInstant('2024-01-01T00:20:00Z') },
    'approved',
  );
  await setStatus(sql, [C], { from: parseInstant(DAY), to: parseInstant(LATER) }, 'rejected');
  await offsetWouldRepeat('after the first round');

  next.searchParams.set('limit', '25');
  let current = await page(`${next.pathname}${next.search}`);
  read.push(...current.ids);
  // A well that sorts before every other, with measurements, and more of B before the last read.
  await upsertRegistry(sql, [{ name: 'W 1', tubes: [{ identifier: NEW, number: '1' }] }]);
  await importRows(rows(NEW, DAY, 6));
  await importRows(rows(B, '2023-12-30T00:00:00Z', 3));
  await offsetWouldRepeat('after the second round');

  let pages = 2;
  while (current.next) {
    current = await page(`${current.next.pathname}${current.next.search}`);
    read.push(...current.ids);
    pages++;
    if (pages === 4) {
      await setStatus(
        sql,
        'all',
        { from: parseInstant(BEFORE), to: parseInstant('2024-01-03T00:00:00Z') },
        'provisional',
      );
      await importRows(rows(A, '2023-12-29T00:00:00Z', 2));
    }
  }
  t.ok(pages >= 5, `${pages} pages`);
  t.equal(new Set(read).size, read.length, 'no feature twice');
  const seen = new Set(read);
  t.same(
    existing.filter((id) => !seen.has(id)),
    [],
    'every feature that existed when the first page was read',
  );
  // The ones that came later and sort after where the pages had got to are there too.
  t.ok(seen.has(`${C}:2024-01-02T00:03:00Z`), 'a later import after the pages is read');
  t.notOk(seen.has(`${NEW}:2024-01-01T00:00:00Z`), 'a new well before the pages is not');
});
