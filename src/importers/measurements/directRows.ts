/**
 * Good rows as binary COPY rows of `measurements` itself (tube id, instant, value, status, and where the
 * database stores them the thousandths: valueStorage.ts), for the import's direct path
 * (directMeasurements.ts), and the watch over the condition that path rests on: each tube's
 * instants rise strictly through the file, so the file cannot hold one tube and instant twice.
 *
 * A tube's internal id is known only once it has been looked up, which the direct path does for all
 * tubes a chunk brought at once; rows of such a tube are written with a placeholder id meanwhile and
 * patched in `identify`.
 */
import type { Instant } from '../../domain/datetime.js';
import { STATUSES } from '../../domain/status.js';
import type { TubeRun } from './changeLog.js';
import {
  MEASUREMENT_BYTES,
  measurementThousandths,
  NULL_FIELD_BYTES,
  writeMeasurement,
} from './copy/copyBinary.js';
import { RowBlocks } from './copy/rowBlocks.js';
import type { RowSink } from './csv/measurementCsv.js';
import { DirectDays } from './directDays.js';

/**
 * Field count, then (length, bytes) of tube_id int4, observed_at timestamptz, value float8, status int2;
 * storing thousandths, then value_thousandths int4, one of the two values a null field.
 */
const ROW_BYTES = 2 + (4 + 4) + MEASUREMENT_BYTES;
const UNKNOWN_ID = -1;

export interface DirectTube {
  /** 32 hex digits. */
  readonly identifier: string;
  /** The internal id, once looked up. */
  id: number;
  /** Its first row's instant: stored rows from there on would make the plain COPY wrong. */
  readonly first: Instant;
  /** Its latest row's instant. */
  seconds: number;
  micros: number;
  /** By status code: the instant and value of its latest row of that status (seconds NaN: none). */
  readonly latestSeconds: number[];
  readonly latestMicros: number[];
  readonly latestValues: number[];
}

/** The latest row of one tube and status in the file. */
export interface LatestRow {
  tubeId: number;
  status: number;
  instant: Instant;
  value: number;
}

export class DirectRows extends RowBlocks implements RowSink {
  /** Why the direct path cannot take this file, once that is known. */
  refusal: string | undefined;
  private readonly tubes = new Map<string, DirectTube>();
  /** The daily rollups of the days the file writes whole. */
  readonly days = new DirectDays<DirectTube>();
  private tube: DirectTube | undefined;
  /** Tubes not yet looked up. */
  private unidentified: DirectTube[] = [];
  /** Rows written with a placeholder id: the tube, block and offset of the id of each. */
  private waitingTubes: DirectTube[] = [];
  private waitingBlocks: Buffer[] = [];
  private waitingOffsets: number[] = [];

  /** `thousandths`: the database stores them, and rows have their column (valueStorage.ts). */
  constructor(
    private readonly maxTubes: number,
    private readonly thousandths: boolean,
  ) {
    super();
  }

  row(
    _line: number,
    identifier: Buffer,
    newTube: boolean,
    instant: Instant,
    value: number,
    status: number,
  ): void {
    if (newTube || this.tube === undefined) this.tube = this.tubeOf(identifier, instant);
    const tube = this.tube;
    if (
      instant.seconds < tube.seconds ||
      (instant.seconds === tube.seconds && instant.micros <= tube.micros)
    ) {
      this.refusal ??= 'the instants of a tube do not rise strictly through the file';
      return;
    }
    tube.seconds = instant.seconds;
    tube.micros = instant.micros;
    tube.latestSeconds[status] = instant.seconds;
    tube.latestMicros[status] = instant.micros;
    tube.latestValues[status] = value;
    this.days.add(tube, instant.seconds, value, status);
    const thousandths = this.thousandths ? measurementThousandths(value) : undefined;
    // With thousandths, the value is null (8 bytes fewer, which the integer's take) or they are.
    const at = this.reserve(
      this.thousandths && thousandths === undefined ? ROW_BYTES + NULL_FIELD_BYTES : ROW_BYTES,
    );
    const view = this.view;
    view.setInt16(at, this.thousandths ? 5 : 4);
    view.setInt32(at + 2, 4);
    view.setInt32(at + 6, tube.id);
    const end = writeMeasurement(view, at + 10, instant, thousandths === undefined ? value : null, status);
    if (this.thousandths) {
      if (thousandths === undefined) view.setInt32(end, -1);
      else {
        view.setInt32(end, 4);
        view.setInt32(end + 4, thousandths);
      }
    }
    if (tube.id === UNKNOWN_ID) {
      this.waitingTubes.push(tube);
      this.waitingBlocks.push(this.block);
      this.waitingOffsets.push(at + 6);
    }
  }

  /** The tubes met since the last call, to be looked up. */
  newTubes(): readonly DirectTube[] {
    const tubes = this.unidentified;
    this.unidentified = [];
    return tubes;
  }

  /** Each tube met, once identified, with its first and last instant in the file. */
  runs(): TubeRun[] {
    return [...this.tubes.values()].map((tube) => ({
      tubeId: tube.id,
      first: tube.first,
      last: { seconds: tube.seconds, micros: tube.micros },
    }));
  }

  /** Each tube's latest row of each status the file has for it. */
  latest(): LatestRow[] {
    return [...this.tubes.values()].flatMap((tube) =>
      tube.latestSeconds.flatMap((seconds, status) =>
        Number.isNaN(seconds)
          ? []
          : [
              {
                tubeId: tube.id,
                status,
                instant: { seconds, micros: tube.latestMicros[status]! },
                value: tube.latestValues[status]!,
              },
            ],
      ),
    );
  }

  /** Called once the new tubes' ids are set: writes them into the rows written before. */
  identify(): void {
    const tubes = this.waitingTubes;
    for (let i = 0; i < tubes.length; i++) {
      const tube = tubes[i]!;
      if (tube.id === UNKNOWN_ID) throw new Error(`tube ${tube.identifier} was not looked up`);
      this.waitingBlocks[i]!.writeInt32BE(tube.id, this.waitingOffsets[i]!);
    }
    this.waitingTubes = [];
    this.waitingBlocks = [];
    this.waitingOffsets = [];
  }

  /** `instant` is the sink's, reused: the tube keeps a copy. */
  private tubeOf(identifier: Buffer, { seconds, micros }: Instant): DirectTube {
    const key = identifier.toString('hex');
    let tube = this.tubes.get(key);
    if (tube === undefined) {
      tube = {
        identifier: key,
        id: UNKNOWN_ID,
        first: { seconds, micros },
        seconds: -Infinity,
        micros: 0,
        latestSeconds: STATUSES.map(() => Number.NaN),
        latestMicros: STATUSES.map(() => 0),
        latestValues: STATUSES.map(() => 0),
      };
      this.tubes.set(key, tube);
      this.unidentified.push(tube);
      if (this.tubes.size > this.maxTubes) this.refusal ??= `more than ${this.maxTubes} tubes`;
    }
    return tube;
  }
}
