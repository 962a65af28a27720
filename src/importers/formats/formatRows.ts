/**
 * A format's reader (reader.ts) seen by the import's paths as a row reader (measurements/rowReader.ts):
 * levels become rows of the RowSink, stated tubes are kept until the paths write them (writeTubes,
 * before the rows' tubes are looked up), skips are counted, and a `FileRefused` becomes the file's
 * `ImportRejected`. One is opened for each reading of the file.
 */
import type { TransactionSql } from 'postgres';
import type { Instant } from '../../domain/datetime.js';
import { STATUSES } from '../../domain/status.js';
import { type ErrorCollector, ImportRejected } from '../importErrors.js';
import { lockTubes } from '../measurements/changeLog.js';
import type { RowSink } from '../measurements/csv/measurementCsv.js';
import { writeUuid } from '../measurements/csv/uuidBytes.js';
import type { RowReader } from '../measurements/rowReader.js';
import { type TubeStatement, type WellStatement, writeWellsAndTubes } from '../registry/registryWriter.js';
import {
  FileRefused,
  type FormatOptions,
  type LevelReader,
  type LevelSink,
  type Place,
  type ReaderFactory,
  type StatedTube,
} from './reader.js';

const ELEVATIONS = ['groundLevel', 'tubeTop', 'screenTop', 'screenBottom'] as const;

export class FormatRows implements RowReader, LevelSink {
  /** Levels passed on. */
  rows = 0;
  readonly hasStatus = true;
  /** Levels passed on, by status code. */
  readonly rowsByStatus = STATUSES.map(() => 0);
  /** Points left out by the reader, by reason. */
  readonly skipped = new Map<string, number>();
  /** What was left out of the tubes the file stated, by reason: how many tubes. */
  readonly notes = new Map<string, number>();
  /** Distinct tubes the file stated. */
  readonly statedIdentifiers = new Set<string>();
  /** Stated since the last writeTubes, by identifier: a later statement of a tube adds to an earlier one. */
  private pending = new Map<string, StatedTube>();
  private readonly reader: LevelReader;
  /** The previous level's tube, as given and as bytes. */
  private lastIdentifier = '';
  private readonly lastTube = Buffer.alloc(16);
  private readonly tubeBytes = Buffer.alloc(16);

  constructor(
    private readonly file: string,
    read: ReaderFactory,
    options: FormatOptions,
    private readonly errors: ErrorCollector,
    private readonly sink: RowSink,
  ) {
    this.reader = read(file, this, options);
  }

  get statedTubes(): boolean {
    return this.pending.size > 0;
  }

  write(chunk: Buffer): void {
    this.refusing(() => this.reader.write(chunk));
  }

  end(): void {
    this.refusing(() => this.reader.end());
  }

  tube(tube: StatedTube): void {
    const earlier = this.pending.get(tube.identifier);
    this.pending.set(tube.identifier, earlier ? { ...earlier, ...definedFields(tube) } : tube);
    this.statedIdentifiers.add(tube.identifier);
  }

  level(
    line: number,
    identifier: string,
    instant: Instant,
    value: number,
    status: number,
    priority: number,
  ): void {
    let newTube = false;
    if (identifier !== this.lastIdentifier) {
      if (!writeUuid(identifier, 0, identifier.length, this.tubeBytes, 0)) {
        throw new FileRefused({ line }, 'tube', `${JSON.stringify(identifier)} is not a UUID`);
      }
      this.lastIdentifier = identifier;
      newTube = this.rows === 0 || !this.tubeBytes.equals(this.lastTube);
      if (newTube) this.tubeBytes.copy(this.lastTube);
    }
    if (!Number.isFinite(value)) throw new FileRefused({ line }, 'value', `${value} is not a finite number`);
    if (!(status >= 0 && status < STATUSES.length)) {
      throw new FileRefused({ line }, 'status', `${status} is not a status code`);
    }
    this.rows++;
    this.rowsByStatus[status]!++;
    this.sink.row(line, this.lastTube, newTube, instant, value, status, priority);
  }

  skipPoints(reason: string, count = 1): void {
    this.skipped.set(reason, (this.skipped.get(reason) ?? 0) + count);
  }

  note(reason: string): void {
    this.notes.set(reason, (this.notes.get(reason) ?? 0) + 1);
  }

  /**
   * Writes the tubes stated since the last call, and their wells: the stated fields over what is
   * stored. The tubes are locked before they are read, so that what another import of them writes is
   * not lost between the read and the write; a statement that breaks the registry's rules refuses the
   * file.
   */
  async writeTubes(tx: TransactionSql, options: { nowait: boolean }): Promise<void> {
    const stated = [...this.pending.values()];
    this.pending = new Map();
    for (const tube of stated) this.refusing(() => checkStatement(tube));

    const wells = new Map<string, WellStatement>();
    for (const tube of stated) {
      const well = wells.get(tube.wellName) ?? { name: tube.wellName };
      if (tube.location !== undefined) well.location = tube.location;
      wells.set(tube.wellName, well);
    }
    const conflicts = await writeWellsAndTubes(tx, [...wells.values()], stated.map(statement), () =>
      lockTubes(
        tx,
        stated.map((t) => t.identifier),
        options,
      ),
    );
    if (conflicts.length === 0) return;
    for (const { tube, field, reason } of conflicts) this.add(stated[tube]!.place, field, reason);
    throw new ImportRejected(this.file, this.errors);
  }

  /**
   * Runs a step of the reader; its `FileRefused` refuses the file, with the place it names. Anything
   * else it throws refuses the file too, at the line it had reached: that file is not imported, and the
   * next files of the command still are.
   */
  private refusing(step: () => void): void {
    try {
      step();
    } catch (error) {
      if (error instanceof ImportRejected) throw error;
      if (error instanceof FileRefused) this.add(error.place, error.field, error.reason);
      else this.add({ line: Math.max(1, this.reader.lines) }, 'file', `cannot be read: ${messageOf(error)}`);
      throw new ImportRejected(this.file, this.errors);
    }
  }

  private add(place: Place, field: string, reason: string): void {
    this.errors.add(place.line, place.path ? `${place.path}: ${field}` : field, reason);
  }
}

/** Opens a FormatRows for each reading of a file (measurements/rowReader.ts); `opened` sees each. */
export function formatRows(
  file: string,
  read: ReaderFactory,
  options: FormatOptions,
  opened: (rows: FormatRows) => void,
) {
  return (errors: ErrorCollector, sink: RowSink) => {
    const rows = new FormatRows(file, read, options, errors, sink);
    opened(rows);
    return rows;
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

function definedFields(tube: StatedTube): Partial<StatedTube> {
  return Object.fromEntries(Object.entries(tube).filter(([, value]) => value !== undefined));
}

function statement(tube: StatedTube): TubeStatement {
  const { identifier, wellName, number, unit, verticalDatum, groundLevel, tubeTop, screenTop, screenBottom } =
    tube;
  return { identifier, wellName, number, unit, verticalDatum, groundLevel, tubeTop, screenTop, screenBottom };
}

/** What the registry's own checks (registry/registryCheck.ts) ask of a listed tube and its well. */
function checkStatement(tube: StatedTube): void {
  if (tube.wellName.trim() === '') throw new FileRefused(tube.place, 'well', 'the well has no name');
  if (tube.number.trim() === '') throw new FileRefused(tube.place, 'number', 'the tube has no number');
  for (const name of ELEVATIONS) {
    const value = tube[name];
    if (value !== undefined && value !== null && !Number.isFinite(value)) {
      throw new FileRefused(tube.place, name, `${value} is not a finite number`);
    }
  }
  const location = tube.location;
  if (location) {
    const { longitude, latitude } = location;
    if (!(Math.abs(longitude) <= 180)) {
      throw new FileRefused(tube.place, 'longitude', `${longitude} is not within [-180, 180]`);
    }
    if (!(Math.abs(latitude) <= 90)) {
      throw new FileRefused(tube.place, 'latitude', `${latitude} is not within [-90, 90]`);
    }
  }
}
