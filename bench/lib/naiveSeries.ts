/**
 * The baselines of the series benchmark: buffered handlers that read every row at once, build the whole
 * document, JSON.stringify it and send it. No auth or checks: those cost the same on every side and are
 * not what is compared.
 *
 * - naive: what a straightforward handler does: `select observed_at, value`, rows with Date objects
 *   (postgres.js's default for timestamptz), JSON.stringify. Its times carry milliseconds
 *   (`…00:00.000Z`) where ours drop a zero fraction, so its body is ~2 MB larger for a year.
 * - buffered: the same, but on the endpoint's own SQL (times formatted by PostgreSQL, no Date objects),
 *   so that it differs from ours only in buffering versus streaming.
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../src/db/connect.js';
import { findTube, seriesSelect } from '../../src/db/queries/series.js';

export const NAIVE_PATH = '/bench/naive/';
export const BUFFERED_PATH = '/bench/buffered/';

interface SeriesParameters {
  tubeIdentifier: string;
  from: string;
  to: string;
}

function registerBuffered(
  app: FastifyInstance,
  sql: Sql,
  path: string,
  /** A postgres.js result is an array: JSON.stringify takes it as it is. */
  select: (tubeId: number, p: SeriesParameters) => Promise<readonly unknown[]>,
): void {
  app.get(`${path}:tubeIdentifier`, async (request, reply) => {
    const { tubeIdentifier } = request.params as { tubeIdentifier: string };
    const { from, to } = request.query as { from: string; to: string };
    const tube = await findTube(sql, tubeIdentifier);
    if (!tube) return reply.code(404).send();
    const measurements = await select(tube.id, { tubeIdentifier, from, to });
    const { unit, verticalDatum } = tube;
    const body = JSON.stringify({ tubeIdentifier, from, to, unit, verticalDatum, measurements });
    return reply.type('application/json').send(body);
  });
}

export function registerBaselines(app: FastifyInstance, sql: Sql): void {
  registerBuffered(
    app,
    sql,
    NAIVE_PATH,
    (tubeId, { from, to }) =>
      sql`
      select observed_at as "observedAt", value
      from measurements
      where tube_id = ${tubeId} and observed_at >= ${from} and observed_at < ${to}
      order by observed_at`,
  );
  registerBuffered(app, sql, BUFFERED_PATH, (tubeId, { from, to }) => seriesSelect(sql, tubeId, from, to));
}
