/**
 * The floor of the series benchmarks, read in the server process with no HTTP and no serialization:
 *
 * - `copyText`: `COPY (the series select) TO STDOUT`, PostgreSQL's own text output, streamed into Node
 *   (the floor: the database's own output path); every byte is counted, nothing is parsed.
 * - `copyBinary`: the endpoint's row source: the same select as binary COPY, decoded into batches.
 * - `binaryCursor`: the other binary candidate, `DECLARE … BINARY CURSOR` and FETCHes of BATCH_SIZE
 *   rows in the simple protocol (the extended one would ask for text), decoded from postgres.js's raw
 *   rows: measured beside the COPY to choose between them (bench/README.md, "Row source").
 */

import type { Sql } from '../../src/db/connect.js';
import { BATCH_SIZE } from '../../src/engine/document.js';
import { measurementBatches, seriesSelect } from '../../src/engine/read/selects.js';

export type FloorMethod = 'copyText' | 'copyBinary' | 'binaryCursor';

export interface FloorRequest {
  method: FloorMethod;
  tubeId: number;
  from: string;
  to: string;
}

const SNAPSHOT = 'isolation level repeatable read read only';
const POSTGRES_EPOCH_MICROS = 946_684_800_000_000;

/** Rows read (for copyText: lines, counted from the bytes). */
export async function readFloor(sql: Sql, request: FloorRequest): Promise<number> {
  const select = seriesSelect(request.tubeId, request.from, request.to);
  let rows = 0;
  await sql.begin(SNAPSHOT, async (tx) => {
    if (request.method === 'copyText') {
      const output = await tx.unsafe(`copy (${select}) to stdout`).readable();
      for await (const chunk of output as AsyncIterable<Buffer>) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) rows++;
      }
    } else if (request.method === 'copyBinary') {
      for await (const batch of measurementBatches(tx, select, 'raw', BATCH_SIZE)) rows += batch.length;
    } else {
      await tx.unsafe(`declare floor_cursor no scroll binary cursor for ${select}`);
      const observedAt = new Float64Array(BATCH_SIZE);
      const value = new Float64Array(BATCH_SIZE);
      while (true) {
        const batch = (await tx
          .unsafe(`fetch forward ${BATCH_SIZE} from floor_cursor`)
          .simple()
          .raw()) as unknown as Buffer[][];
        for (let i = 0; i < batch.length; i++) {
          const [, time, level] = batch[i]!;
          observedAt[i] =
            time!.readInt32BE(0) * 4_294_967_296 + time!.readUInt32BE(4) + POSTGRES_EPOCH_MICROS;
          value[i] = level!.readDoubleBE(0);
        }
        rows += batch.length;
        if (batch.length < BATCH_SIZE) break;
      }
    }
  });
  return rows;
}
