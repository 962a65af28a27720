/**
 * The loop both paths of the import share: each chunk of the input goes through the row reader, whose
 * sink encodes the good rows; tubes the chunk stated are written first (the COPY ended for that; with
 * `nowait`, the direct path's rule for locks, failing at once on a tube another import holds), then
 * `prepare` may look at what the chunk brought (and refuse it, or look up tubes) before the rows are
 * sent. Any failure abandons the COPY, so that the transaction can roll back.
 */
import type { TransactionSql } from 'postgres';
import type { CopyIn } from './copy/copyIn.js';
import type { RowBlocks } from './copy/rowBlocks.js';
import type { RowReader } from './rowReader.js';

export async function copyRows(
  tx: TransactionSql,
  chunks: AsyncIterable<Buffer>,
  reader: RowReader,
  rows: RowBlocks,
  copy: CopyIn,
  prepare: () => Promise<void> = async () => {},
  options: { nowait: boolean } = { nowait: false },
): Promise<void> {
  const afterChunk = async () => {
    if (reader.statedTubes) {
      await copy.end();
      await reader.writeTubes?.(tx, options);
    }
    await prepare();
    await copy.write(rows.take());
  };
  try {
    for await (const chunk of chunks) {
      reader.write(chunk);
      await afterChunk();
    }
    reader.end();
    await afterChunk();
    await copy.end();
  } catch (error) {
    copy.abort(error as Error);
    throw error;
  }
}
