/**
 * What every importer of the field's files (BRO GMW and GLD, DINO, FEWS) gives the one write path
 * (write.ts): a push reader per file that states tubes and their wells, passes levels on one by one,
 * counts what it skips and why, and refuses the file with the place that broke it. Nothing here
 * touches the database: a reader only reads.
 */
import type { Instant } from '../../domain/datetime.js';

/** Where a file says something: its line (from 1) and, in XML, the element path (`dsgld/GLD_O/…`). */
export interface Place {
  line: number;
  path?: string | undefined;
}

/**
 * What a file states of a tube and its well. A field left undefined is one the format does not state:
 * a re-import leaves it as it is (what another format said stays). `null` states it unknown.
 */
export interface StatedTube {
  /** The tube's UUID v5 (identity.ts), lower case. */
  identifier: string;
  wellName: string;
  number: string;
  location?: { longitude: number; latitude: number } | null;
  unit?: string;
  verticalDatum?: string;
  groundLevel?: number | null;
  tubeTop?: number | null;
  screenTop?: number | null;
  screenBottom?: number | null;
  place: Place;
}

/** Where a reader sends what it reads, in file order. */
export interface LevelSink {
  /** A tube (and its well) the file describes; written in the file's transaction before its levels. */
  tube(tube: StatedTube): void;
  /**
   * One level of the tube `identifier` (lower-case UUID; pass the same string object for a run of one
   * tube's levels). `value` is in metres, already rounded (roundLevel); `status` a status code
   * (domain/status.ts). Of two levels of one tube and instant, the higher `priority` (any safe integer,
   * so that a reader can rank by a time) wins, then the later line. `instant` may be reused by the reader
   * after the call.
   */
  level(
    line: number,
    identifier: string,
    instant: Instant,
    value: number,
    status: number,
    priority: number,
  ): void;
  /** Points left out, with the reason the report counts them under (`control reading`, `no value`). */
  skipPoints(reason: string, count?: number): void;
  /** Something a file states of a tube that was left out, for the report (`screen left out (one bound only)`). */
  note?(reason: string): void;
}

/** A file read as it streams: chunks in, then the end. Throws `FileRefused` at the first thing it refuses. */
export interface LevelReader {
  write(chunk: Buffer): void;
  end(): void;
  /** Lines read so far, for the progress line. */
  readonly lines: number;
}

/** The file is not what its command reads, or breaks a rule: nothing of it is written. */
export class FileRefused extends Error {
  override name = 'FileRefused';
  constructor(
    readonly place: Place,
    /** The field or element the reason is about (`value`, `wml2:time`, `Stand (cm t.o.v. NAP)`). */
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${place.line}${place.path ? ` (${place.path})` : ''}: ${field}: ${reason}`);
  }
}

/** Decimal text as a level: 15 significant digits, so a binary artefact such as 0.6709999999999999 is 0.671. */
export function roundLevel(value: number): number {
  return Number(value.toPrecision(15));
}

/** The options of `gwapi import <format>`; each reader takes what its format uses. */
export interface FormatOptions {
  /** GLD: the tube of a file that names none (a tube identifier), or the one it must name. */
  tube?: string | undefined;
  /** DINO: the zone its dates are midnight in (an IANA name). */
  timezone: string;
  /** DINO: the status of its levels (a status code). */
  status: number;
  /** FEWS: the `parameterId`s to import; undefined: every one in metres. */
  parameters?: readonly string[] | undefined;
  /** FEWS: the vertical datum of series in plain `m`. */
  datum: string;
}

/** Opens the reader of one file; `file` names it in errors. */
export type ReaderFactory = (file: string, sink: LevelSink, options: FormatOptions) => LevelReader;
