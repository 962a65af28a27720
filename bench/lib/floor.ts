/**
 * The floor of the series benchmark: the same rows read by a bare cursor loop, with no HTTP and no
 * serialization. Two ways, and the faster one counts: the endpoint's own DECLARE/FETCH (same SQL, same
 * batch size, same read-only snapshot) and postgres.js's `.cursor()` on the same query.
 */

import type { Sql } from '../../src/db/connect.js';
import { BATCH_SIZE } from '../../src/v1/measurements/seriesStream.js';
import { measurementBatches, seriesSelect } from '../../src/v1/measurements/sql.js';

export interface FloorRequest {
  method: 'declare' | 'cursor';
  tubeId: number;
  from: string;
  to: string;
}

const SNAPSHOT = 'isolation level repeatable read read only';

export async function readWithDeclaredCursor(sql: Sql, request: FloorRequest): Promise<number> {
  let rows = 0;
  await sql.begin(SNAPSHOT, async (tx) => {
    const select = seriesSelect(tx, request.tubeId, request.from, request.to);
    for await (const batch of measurementBatches(tx, select, BATCH_SIZE)) {
      rows += batch.length;
    }
  });
  return rows;
}

export async function readWithCursor(sql: Sql, request: FloorRequest): Promise<number> {
  let rows = 0;
  await sql.begin(SNAPSHOT, async (tx) => {
    for await (const batch of seriesSelect(tx, request.tubeId, request.from, request.to).cursor(BATCH_SIZE)) {
      rows += batch.length;
    }
  });
  return rows;
}
