/**
 * What turns an import's input into rows for either path (measurements.ts): the measurements CSV
 * (csv/measurementCsv.ts), or a format's reader behind its adapter (formats/formatRows.ts). Each
 * reading of the input opens a reader of its own.
 */
import type { TransactionSql } from 'postgres';
import type { ErrorCollector } from '../importErrors.js';
import type { RowSink } from './csv/measurementCsv.js';

export interface RowReader {
  /** Reads the complete rows of `chunk`; bad rows go to the errors, or the reader throws `ImportRejected`. */
  write(chunk: Buffer): void;
  end(): void;
  /** Good rows passed on to the sink. */
  readonly rows: number;
  /** Good rows by status code, where the import's report tells them (a format's; the CSV's does not). */
  readonly rowsByStatus?: readonly number[];
  /** Whether the input states each row's status; without it stored rows keep theirs. */
  readonly hasStatus: boolean;
  /**
   * Whether the input stated tubes since the last `writeTubes`: they must be written (with the COPY
   * ended, as a connection in COPY answers no queries) before the rows' tubes are looked up.
   */
  readonly statedTubes?: boolean;
  /**
   * Writes the tubes stated since the last call, in the import's transaction, once it holds their locks
   * (changeLog.ts); `nowait`: fail at once (55P03) rather than wait for another import of them.
   */
  writeTubes?(tx: TransactionSql, options: { nowait: boolean }): Promise<void>;
}

/** Opens a reader for one reading of the input. */
export type OpenRowReader = (errors: ErrorCollector, sink: RowSink) => RowReader;
