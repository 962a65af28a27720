/**
 * The baselines of the series benchmark: buffered handlers that read every row at once, build the whole
 * document, JSON.stringify it and send it. No auth or checks: those cost the same on every side and are
 * not what is compared.
 *
 * - naive: what a straightforward handler does: `select observed_at, value`, rows with Date objects
 *   (postgres.js's default for timestamptz), JSON.stringify. Its times carry milliseconds
 *   (`…00:00.000Z`) where ours drop a zero fraction, so its body is ~2 MB larger for a year.
 * - buffered: the endpoint's own SQL (times and values as PostgreSQL's text) and its precompiled
 *   serializer, for the whole document at once: it differs from ours only in buffering versus streaming.
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../src/db/connect.js';
import { findTube, type MeasurementRow, seriesSelect } from '../../src/db/queries/series.js';
import { compileSerializer } from '../../src/schemas/jsonSchema.js';
import { GroundwaterLevelSeries } from '../../src/schemas/series.js';

const serializeSeries = compileSerializer(GroundwaterLevelSeries);

export const NAIVE_PATH = '/bench/naive/';
export const BUFFERED_PATH = '/bench/buffered/';

interface SeriesParameters {
  tubeIdentifier: string;
  from: string;
  to: string;
}

function registerBuffered<Row>(
  app: FastifyInstance,
  sql: Sql,
  path: string,
  select: (tubeId: number, p: SeriesParameters) => Promise<Row[]>,
  serialize: (
    series: SeriesParameters & { unit: string; verticalDatum: string; measurements: Row[] },
  ) => string,
): void {
  app.get(`${path}:tubeIdentifier`, async (request, reply) => {
    const { tubeIdentifier } = request.params as { tubeIdentifier: string };
    const { from, to } = request.query as { from: string; to: string };
    const tube = await findTube(sql, tubeIdentifier);
    if (!tube) return reply.code(404).send();
    const measurements = await select(tube.id, { tubeIdentifier, from, to });
    const { unit, verticalDatum } = tube;
    const body = serialize({ tubeIdentifier, from, to, unit, verticalDatum, measurements });
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
    JSON.stringify,
  );
  registerBuffered(
    app,
    sql,
    BUFFERED_PATH,
    async (tubeId, { from, to }) =>
      (await seriesSelect(sql, tubeId, from, to)) as unknown as MeasurementRow[],
    serializeSeries,
  );
}
