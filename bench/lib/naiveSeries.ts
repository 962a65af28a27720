/**
 * The baselines of the series benchmark: handlers that build the whole document before they send it.
 * No auth or checks: those cost the same on every side and are not what is compared.
 *
 * - naive: what a straightforward handler does: `select observed_at, value`, rows with Date objects
 *   (postgres.js's default for timestamptz) and numbers, JSON.stringify. Its times carry milliseconds
 *   (`…00:00.000Z`) where ours drop a zero fraction, so its body is larger.
 * - buffered: the endpoint's own stream (its SQL, cursor and serializer), collected whole and then
 *   sent: it differs from ours only in buffering versus streaming.
 */
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../src/db/connect.js';
import { openSeriesStream } from '../../src/engine/document.js';
import { findTube } from '../../src/engine/read/selects.js';
import { jsonSeries } from '../../src/engine/write/json.js';
import type { Client } from '../../src/keys/clients.js';

export const NAIVE_PATH = '/bench/naive/';
export const BUFFERED_PATH = '/bench/buffered/';

interface SeriesRequest {
  Params: { tubeIdentifier: string };
  Querystring: { from: string; to: string };
}

/** The baselines read any tube: auth is not what they are compared on. */
const EVERY_TUBE: Client = { keyId: 'bench', allTubes: true, grants: new Set() };

export function registerBaselines(app: FastifyInstance, sql: Sql): void {
  app.get<SeriesRequest>(`${NAIVE_PATH}:tubeIdentifier`, async (request, reply) => {
    const { tubeIdentifier } = request.params;
    const { from, to } = request.query;
    const tube = await findTube(sql, tubeIdentifier);
    if (!tube) return reply.code(404).send();
    const measurements = await sql`
      select observed_at as "observedAt", value
      from measurements
      where tube_id = ${tube.id} and observed_at >= ${from} and observed_at < ${to}
      order by observed_at`;
    const { unit, verticalDatum } = tube;
    const body = JSON.stringify({ tubeIdentifier, from, to, unit, verticalDatum, measurements });
    return reply.type('application/json').send(body);
  });

  app.get<SeriesRequest>(`${BUFFERED_PATH}:tubeIdentifier`, async (request, reply) => {
    const { tubeIdentifier } = request.params;
    const { from, to } = request.query;
    const stream = await openSeriesStream(sql, { client: EVERY_TUBE, tubeIdentifier, from, to }, jsonSeries);
    if (!stream) return reply.code(404).send();
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return reply.type('application/json').send(Buffer.concat(chunks));
  });
}
