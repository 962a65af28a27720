/**
 * A year of 1-minute data (527,040 measurements, ~28 MB of JSON, less as CSV) streams in constant
 * memory, in either format. The server is `gwapi serve` in a process of its own (one per format), so
 * its memory is measured alone, and it runs with a 64 MB old-generation heap (and the image's young
 * generation): the year held at once (its body and its rows) does not fit beside the server itself, so
 * a server that buffered the response would die of heap exhaustion (checked by hand: it does), while a
 * streaming one completes, and its resident memory must grow by less than the 40 MB issue 5 allows.
 */
import t from 'tap';
import { residentMb } from '../../../testkit/processes.js';
import { addSeriesFixture } from '../../../testkit/seriesFixture.js';
import { freshDatabase } from '../../helpers/database.js';
import { get } from '../../helpers/http.js';
import { fetchWhileSampling, GROWTH_BOUND_MB, startTightServer } from '../../helpers/sampling.js';

const ROWS_IN_YEAR = 366 * 24 * 60;
t.test('a 366-day series of 1-minute data streams in constant server memory', async (t) => {
  const db = await freshDatabase(t);
  const { identifier, key } = await addSeriesFixture(db.sql);

  const path = `/v1/groundwater-monitoring-tubes/${identifier}/measurements`;

  /**
   * The year in `format` from a server of its own, read while sampling that server's memory, after a
   * warm-up in the same format; `count` tells how many measurements a body holds.
   */
  async function yearWithinBound(format: 'json' | 'csv', count: (body: string) => number) {
    const { child, base } = await startTightServer(t, db.url);
    // Warm up: every module loaded and every code path compiled once before measuring.
    const warmUp = await get(
      base,
      `${path}?from=2024-01-01T00:00:00Z&to=2024-01-08T00:00:00Z&format=${format}`,
      {
        'x-api-key': key,
      },
    );
    t.equal(warmUp.status, 200);
    t.equal(count(warmUp.body), 7 * 1440);

    const baselineMb = residentMb(child.pid!);
    const started = performance.now();
    const year = await fetchWhileSampling(
      `${base}${path}?from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z&format=${format}`,
      key,
      child.pid!,
    );
    const seconds = (performance.now() - started) / 1000;
    t.equal(year.status, 200);
    const growthMb = year.peakMb - baselineMb;
    t.comment(
      `${format}: ${ROWS_IN_YEAR} measurements, ${(year.body.length / 1e6).toFixed(1)} MB in ${seconds.toFixed(2)} s ` +
        `(${Math.round(ROWS_IN_YEAR / seconds).toLocaleString('en')} rows/s); server RSS ` +
        `${baselineMb.toFixed(0)} MB → peak ${year.peakMb.toFixed(0)} MB (+${growthMb.toFixed(1)} MB)`,
    );
    t.ok(
      growthMb < GROWTH_BOUND_MB,
      `${format}: server memory grew by ${growthMb.toFixed(1)} MB (bound ${GROWTH_BOUND_MB} MB) for a ${(year.body.length / 1e6).toFixed(0)} MB body`,
    );
    return year.body;
  }

  const series = JSON.parse(await yearWithinBound('json', (body) => JSON.parse(body).measurements.length));
  t.equal(series.measurements.length, ROWS_IN_YEAR, 'every measurement arrived');
  t.equal(series.measurements.at(-1).observedAt, '2024-12-31T23:59:00Z');

  // Header and final CRLF around the lines of the measurements.
  const csvLines = (body: string) => body.split('\r\n').slice(1, -1);
  const lines = csvLines(await yearWithinBound('csv', (body) => csvLines(body).length));
  t.equal(lines.length, ROWS_IN_YEAR, 'every measurement arrived as CSV');
  t.match(lines.at(-1), /^2024-12-31T23:59:00Z,/);
});
