/**
 * Good rows as binary COPY rows of the staging table (stagedMeasurements.ts): line, tube identifier,
 * instant, value, status, priority. The line number goes along so that the checks done later in SQL can
 * name lines, and decide between two rows of one tube and instant with the priority.
 */
import type { Instant } from '../../domain/datetime.js';
import { MEASUREMENT_BYTES, writeInt64, writeMeasurement } from './copy/copyBinary.js';
import { RowBlocks } from './copy/rowBlocks.js';
import type { RowSink } from './csv/measurementCsv.js';

/** Field count, then (length, bytes) of line int8, tube uuid, observed_at timestamptz, value float8, status int2, priority int8. */
const ROW_BYTES = 2 + (4 + 8) + (4 + 16) + MEASUREMENT_BYTES + (4 + 8);
/** Far more tubes than a network has; a file with more identifiers is checked row by row in SQL. */
const MAX_KEPT_TUBES = 100_000;

export class StagingRows extends RowBlocks implements RowSink {
  /**
   * The distinct tube identifiers (32 hex digits), so that SQL can look up a handful of identifiers
   * instead of joining every staged row with the tubes; undefined once there are too many to keep
   * (then SQL checks every row).
   */
  tubes: Set<string> | undefined = new Set();

  constructor(private readonly maxKeptTubes = MAX_KEPT_TUBES) {
    super();
  }

  row(
    line: number,
    tube: Buffer,
    newTube: boolean,
    instant: Instant,
    value: number,
    status: number,
    priority = 0,
  ): void {
    const at = this.reserve(ROW_BYTES);
    const view = this.view;
    view.setInt16(at, 6);
    view.setInt32(at + 2, 8);
    writeInt64(view, at + 6, line);
    view.setInt32(at + 14, 16);
    tube.copy(this.block, at + 18);
    writeMeasurement(view, at + 34, instant, value, status);
    view.setInt32(at + 34 + MEASUREMENT_BYTES, 8);
    writeInt64(view, at + 38 + MEASUREMENT_BYTES, priority);
    if (newTube && this.tubes) {
      this.tubes.add(tube.toString('hex'));
      if (this.tubes.size > this.maxKeptTubes) this.tubes = undefined;
    }
  }
}
