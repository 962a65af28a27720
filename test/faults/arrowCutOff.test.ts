/**
 * An Arrow document cut off mid-stream must never read as a whole, shorter one: for the series and the
 * network alike, the backend is terminated at several points of a year's stream, and every cut body is
 * refused by apache-arrow and polars, with the status column too. The server stops at the end of a write, so most cuts fall between
 * two chunks, where a writer that sent whole messages would leave a stream that is complete but for its
 * end-of-stream marker, which both readers accept.
 */
import { tableFromIPC } from 'apache-arrow';
import pl from 'nodejs-polars';
import t, { type Test } from 'tap';
import { seriesPath } from '../../testkit/apiPaths.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { startApi, type TestApi } from '../helpers/api.js';
import { cutOffAfter } from '../helpers/appSessions.js';
import { get } from '../helpers/http.js';
import { networkPath } from '../helpers/network.js';

const YEAR = { from: '2024-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z' };
const DAYS = 366;

/**
 * Reads the whole document at `path` (both readers take it, every row), then cuts it off at each of
 * `fractions` of its length and proves that both readers refuse what came. The cuts stay early enough
 * that what the server and the kernel buffer past the cut point never reaches the end.
 */
async function provesCutsRefused(
  t: Test,
  api: TestApi,
  key: string,
  path: string,
  rows: number,
  fractions: number[],
) {
  const whole = await get(api.base, path, { 'x-api-key': key });
  t.equal(whole.status, 200);
  t.equal(tableFromIPC(whole.bytes!).numRows, rows, 'apache-arrow reads the whole document');
  t.equal(pl.readIPCStream(whole.bytes!).height, rows, 'polars reads the whole document');
  for (const fraction of fractions) {
    const { bytes } = await cutOffAfter(t, api, path, key, {
      bytes: Math.round(fraction * whole.bytes!.length),
    });
    const cut = `the body cut off after ${(bytes.length / 1e6).toFixed(2)} of ${(whole.bytes!.length / 1e6).toFixed(2)} MB`;
    t.ok(bytes.length > 0 && bytes.length < whole.bytes!.length, `${cut}: begun, and short`);
    t.throws(() => tableFromIPC(bytes), `apache-arrow refuses ${cut}`);
    t.throws(() => pl.readIPCStream(bytes), `polars refuses ${cut}`);
  }
}

t.test('an Arrow document cut off is refused by every reader', async (t) => {
  // One connection: the one streaming is the one whose backend is terminated.
  const api = await startApi(t, { poolMax: 1, env: { LIMITS_ENABLED: 'false' } });
  const { sql } = api.db;
  // A year every 30 seconds in the first tube, so that even its series outlasts what is buffered past
  // a cut point; an hourly year in the second.
  const [dense, hourly] = await addWell(sql, 'Network', [{ number: '1' }, { number: '2' }]);
  await addRegularSeries(sql, dense!.id, YEAR.from, YEAR.to, '30 seconds');
  await addRegularSeries(sql, hourly!.id, YEAR.from, YEAR.to, '1 hour');
  await sql`vacuum analyze measurements`;
  const { key } = await addKey(sql, { tubeIds: [dense!.id, hourly!.id] });
  const denseRows = DAYS * 24 * 120;

  t.test('the series', (t) =>
    provesCutsRefused(
      t,
      api,
      key,
      `${seriesPath(dense!.identifier, YEAR.from, YEAR.to)}&format=arrow`,
      denseRows,
      [0.03, 0.1, 0.2],
    ),
  );
  t.test('the network', (t) =>
    provesCutsRefused(
      t,
      api,
      key,
      networkPath(YEAR, '&format=arrow'),
      denseRows + DAYS * 24,
      [0.03, 0.1, 0.2, 0.3],
    ),
  );
  t.test('with the status: its dictionary, then its column', (t) =>
    provesCutsRefused(
      t,
      api,
      key,
      networkPath(YEAR, '&format=arrow&include=status&status=provisional'),
      denseRows + DAYS * 24,
      [0.05, 0.2],
    ),
  );
});
