/**
 * The loop both paths of the import share: each chunk of the input goes through the CSV reader, whose
 * sink encodes the good rows; `prepare` may look at what the chunk brought (and refuse it, or look up
 * tubes) before the rows are sent. Any failure abandons the COPY, so that the transaction can roll back.
 */
import type { CopyIn } from './copy/copyIn.js';
import type { RowBlocks } from './copy/rowBlocks.js';
import type { MeasurementCsv } from './csv/measurementCsv.js';

export async function copyCsv(
  chunks: AsyncIterable<Buffer>,
  csv: MeasurementCsv,
  rows: RowBlocks,
  copy: CopyIn,
  prepare: () => Promise<void> = async () => {},
): Promise<void> {
  try {
    for await (const chunk of chunks) {
      csv.write(chunk);
      await prepare();
      await copy.write(rows.take());
    }
    csv.end();
    await prepare();
    await copy.write(rows.take());
    await copy.end();
  } catch (error) {
    copy.abort(error as Error);
    throw error;
  }
}
