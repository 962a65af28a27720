/**
 * The floor of the formats scenario, read in the server process with no HTTP and nothing written:
 *
 * - `copyText`: `COPY (the endpoint's select) TO STDOUT`, PostgreSQL's own text output, streamed into
 *   Node; every byte is counted, nothing is parsed. The floor every format is divided by: what the
 *   database's own output path costs for the same rows.
 * - `copyBinary`: the endpoints' row source: the same select as binary COPY, decoded into batches
 *   (what is left of a format's time above it is writing and sending).
 *
 * The rows are the series' (one tube) or the network's (its tubes in the list's order, each by the
 * series' select), as the endpoints select them.
 */

import type { Sql } from '../../src/db/connect.js';
import { BATCH_SIZE } from '../../src/engine/document.js';
import { readBatches } from '../../src/engine/read/binaryCopy.js';
import { acrossTubes, LISTED_TUBE, seriesSelect } from '../../src/engine/read/selects.js';

export type FloorMethod = 'copyText' | 'copyBinary';

export interface FloorRequest {
  method: FloorMethod;
  /** One tube: the series' select; several: the network's. */
  tubeIds: number[];
  from: string;
  to: string;
}

const SNAPSHOT = 'isolation level repeatable read read only';

const selectOf = ({ tubeIds, from, to }: FloorRequest) =>
  tubeIds.length === 1
    ? seriesSelect(tubeIds[0]!, from, to)
    : acrossTubes(tubeIds, seriesSelect(LISTED_TUBE, from, to));

/** Rows read (for copyText: lines, counted from the bytes). */
export async function readFloor(sql: Sql, request: FloorRequest): Promise<number> {
  const select = selectOf(request);
  let rows = 0;
  await sql.begin(SNAPSHOT, async (tx) => {
    if (request.method === 'copyText') {
      const output = await tx.unsafe(`copy (${select}) to stdout`).readable();
      for await (const chunk of output as AsyncIterable<Buffer>) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows++;
      }
    } else {
      for await (const batch of readBatches(tx, select, 'raw', BATCH_SIZE)) rows += batch.length;
    }
  });
  return rows;
}
