/**
 * A network of many tubes streams in bounded memory, as one long series does
 * (test/v1/series/memory.test.ts; the bound and the server are helpers/sampling.ts's): `gwapi
 * serve` in a process of its own, with a 64 MB old generation that the whole body, held at once, would
 * not fit beside the server. Many tubes of a week each rather than one of a year: what grows with the number of tubes
 * (the tube list, heads, boundaries inside batches) must not make memory grow.
 */
import t from 'tap';
import { addKey, addNetwork } from '../../../testkit/fixtures.js';
import { residentMb } from '../../../testkit/processes.js';
import { freshDatabase } from '../../helpers/database.js';
import { get } from '../../helpers/http.js';
import { networkPath } from '../../helpers/network.js';
import { fetchWhileSampling, GROWTH_BOUND_MB, startTightServer } from '../../helpers/sampling.js';

const TUBES = 1000;
const WEEK = { from: '2024-01-01T00:00:00Z', to: '2024-01-08T00:00:00Z' };
const ROWS_PER_TUBE = 7 * 96;

t.test(`${TUBES} tubes stream in bounded server memory`, async (t) => {
  const db = await freshDatabase(t);
  const tubes = await addNetwork(db.sql, TUBES, { ...WEEK, step: '15 minutes' });
  const { key } = await addKey(db.sql, { allTubes: true });

  for (const format of ['json', 'csv'] as const) {
    const { child, base } = await startTightServer(t, db.url);
    const warmUp = await get(
      base,
      networkPath({ ...WEEK, tubes: [tubes[0]!.identifier] }, `&format=${format}`),
      {
        'x-api-key': key,
      },
    );
    t.equal(warmUp.status, 200);
    const baselineMb = residentMb(child.pid!);
    const network = await fetchWhileSampling(
      `${base}${networkPath(WEEK, `&format=${format}`)}`,
      key,
      child.pid!,
    );
    t.equal(network.status, 200);
    const rows =
      format === 'json'
        ? JSON.parse(network.body).series.reduce(
            (sum: number, series: { measurements: unknown[] }) => sum + series.measurements.length,
            0,
          )
        : network.body.split('\r\n').length - 2;
    t.equal(rows, TUBES * ROWS_PER_TUBE, `${format}: every measurement of every tube`);
    const growthMb = network.peakMb - baselineMb;
    t.comment(
      `${format}: ${(network.body.length / 1e6).toFixed(1)} MB; server RSS +${growthMb.toFixed(1)} MB`,
    );
    t.ok(
      growthMb < GROWTH_BOUND_MB,
      `${format}: server memory grew by ${growthMb.toFixed(1)} MB (bound ${GROWTH_BOUND_MB} MB)`,
    );
  }
});
