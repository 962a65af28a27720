/**
 * DINO's groundwater-level CSV (`Grondwaterstanden_Put`, `…_1.csv`), for `gwapi import dino`: a few header
 * lines (`Titel:`, `Referentie:`, …), then the metadata section (`Locatie,Filternummer,…,X-coordinaat,…`),
 * one row per dated period of a tube, then the levels section (`Locatie,Filternummer,Peildatum,…`).
 * Elevations and levels are centimetres relative to NAP; dates have no time and no offset.
 */
import { CsvReader, isBlank, numberIn, shown } from '../csvLines.js';
import { dinoTube } from '../identity.js';
import { rdToWgs84 } from '../projection.js';
import {
  FileRefused,
  type FormatOptions,
  type LevelSink,
  type ReaderFactory,
  roundLevel,
  type StatedTube,
} from '../reader.js';
import { midnightIn } from './midnight.js';

/** The reason the report counts a row without a level relative to NAP under. */
export const NO_NAP_LEVEL = 'no NAP level';
/** Why a tube's screen is left out: DINO states one of its bounds only. */
export const ONE_SCREEN_BOUND = 'screen left out (one bound only)';

/** A header as compared: lower case, without dots, so `t.o.v. NAP`, `t.o.v NAP` and `tov NAP` are one. */
const normalized = (header: string) => header.toLowerCase().replaceAll('.', '').replace(/\s+/g, ' ').trim();

const METADATA = {
  location: 'Locatie',
  filter: 'Filternummer',
  x: 'X-coordinaat',
  y: 'Y-coordinaat',
  groundLevel: 'Maaiveld (cm t.o.v. NAP)',
  start: 'Startdatum',
  tubeTop: 'Meetpunt (cm t.o.v. NAP)',
  screenTop: 'Bovenkant filter (cm t.o.v. NAP)',
  screenBottom: 'Onderkant filter (cm t.o.v. NAP)',
} as const;

const LEVELS = {
  location: 'Locatie',
  filter: 'Filternummer',
  date: 'Peildatum',
  level: 'Stand (cm t.o.v. NAP)',
} as const;

type Columns<T> = { [K in keyof T]: number };

/** The header lines before the first section: blank, or a label and a colon (`Titel:`, `Datum: 05/10/2015`). */
const isPreamble = (fields: string[]) => isBlank(fields) || /^[A-Za-z][^<>:]*:/.test(fields[0]!);
/** What DINO writes instead of the sections for a well without levels: the file holds nothing to import. */
const NO_LEVELS = 'Van deze put zijn geen standen opgenomen';
/** More header lines than DINO writes mean another kind of file: stop reading it there. */
const MAX_PREAMBLE = 40;

/** A tube's metadata period: the row's values, kept until the levels begin. */
interface Period {
  tube: StatedTube;
  /** Days since 1970 of its `Startdatum`, -Infinity without one. */
  start: number;
  /** Its row gave one screen bound only, so the screen is left out. */
  oneScreenBound: boolean;
}

export const dinoReader: ReaderFactory = (_file, sink, options) => new DinoCsv(sink, options);

class DinoCsv extends CsvReader {
  private section: 'preamble' | 'metadata' | 'between' | 'levels' | 'none' = 'preamble';
  private metadata: Columns<typeof METADATA> | undefined;
  private levels: Columns<typeof LEVELS> | undefined;
  /** The fields a row must have: up to the last column the header names. */
  private namedFields = 0;
  /** Of each tube, the period with the latest `Startdatum` so far, in the order tubes first appear. */
  private readonly periods = new Map<string, Period>();
  /** The identifier of each tube stated to the sink, by `Locatie` and `Filternummer`. */
  private readonly stated = new Map<string, string>();
  private readonly midnight: ReturnType<typeof midnightIn>;
  private readonly instant = { seconds: 0, micros: 0 };

  constructor(
    private readonly sink: LevelSink,
    private readonly options: FormatOptions,
  ) {
    super();
    this.midnight = midnightIn(options.timezone);
  }

  protected finish(lines: number): void {
    if (this.section !== 'levels' && this.section !== 'none') {
      throw new FileRefused(
        { line: Math.max(lines, 1) },
        'Peildatum',
        'the file ends before its levels section (Locatie,Filternummer,Peildatum,…): is it cut off, or not a DINO file?',
      );
    }
  }

  protected line(fields: string[], line: number): void {
    switch (this.section) {
      case 'none':
        return;
      case 'levels':
        if (!isBlank(fields)) this.level(fields, line);
        return;
      case 'metadata':
        if (isBlank(fields)) this.section = 'between';
        else this.period(fields, line);
        return;
      default:
        if (fields[0] === 'Locatie') this.header(fields, line);
        else if (this.section === 'preamble' && fields[0]!.startsWith(NO_LEVELS)) this.section = 'none';
        else if (this.section === 'preamble' && isPreamble(fields) && line <= MAX_PREAMBLE) return;
        else if (this.section === 'between' && isBlank(fields)) return;
        else this.refuse(fields, line);
    }
  }

  private refuse(fields: string[], line: number): never {
    const found = shown(fields.join(','));
    if (fields[0] === 'LOCATIE') {
      throw new FileRefused(
        { line },
        'LOCATIE',
        `DINO's older layout (its _0 file), which has no levels relative to NAP: import the _1 file; found ${found}`,
      );
    }
    throw new FileRefused(
      { line },
      'row',
      this.section === 'preamble'
        ? `not a DINO groundwater-level file (Grondwaterstanden_Put, …_1.csv): expected its header lines, then Locatie,Filternummer,…; found ${found}`
        : `expected the levels section (Locatie,Filternummer,Peildatum,…), found ${found}`,
    );
  }

  private header(fields: string[], line: number): void {
    const names = fields.map(normalized);
    this.namedFields = names.findLastIndex((name) => name !== '') + 1;
    if (names.includes(normalized(LEVELS.date))) {
      const unit = names
        .map((name) => /^stand \((.+) tov nap\)$/.exec(name)?.[1])
        .find((found) => found !== undefined);
      if (unit !== undefined && unit !== 'cm') {
        throw new FileRefused({ line }, LEVELS.level, `unit ${shown(unit)}: DINO states levels in cm`);
      }
      this.levels = columnsOf(names, LEVELS, line);
      this.section = 'levels';
      for (const [key, period] of this.periods) this.state(key, period.tube, period.oneScreenBound);
      this.periods.clear();
    } else if (this.section === 'preamble') {
      this.metadata = columnsOf(names, METADATA, line);
      this.section = 'metadata';
    } else {
      this.refuse(fields, line);
    }
  }

  /** One dated period of a tube's metadata; the latest `Startdatum` wins, of equal ones the later row. */
  private period(fields: string[], line: number): void {
    const columns = this.metadata!;
    this.checkFields(fields, line);
    const location = fields[columns.location]!;
    const filter = fields[columns.filter]!;
    const startText = fields[columns.start]!;
    const start = startText === '' ? Number.NEGATIVE_INFINITY : readDate(startText, line, 'Startdatum');
    const key = `${location}\u0000${filter}`;
    const kept = this.periods.get(key);
    if (kept !== undefined && kept.start > start) return;
    const x = fields[columns.x]!;
    const y = fields[columns.y]!;
    const screenTop = metres(fields[columns.screenTop]!, line, 'Bovenkant filter (cm t.o.v. NAP)');
    const screenBottom = metres(fields[columns.screenBottom]!, line, 'Onderkant filter (cm t.o.v. NAP)');
    // 1.3's rule: a screen with one bound is left out whole.
    const oneScreenBound = (screenTop === null) !== (screenBottom === null);
    const tube = {
      ...this.unknownTube(location, filter, line),
      location:
        x === '' || y === ''
          ? null
          : rdToWgs84(numberIn(x, line, 'X-coordinaat'), numberIn(y, line, 'Y-coordinaat')),
      groundLevel: metres(fields[columns.groundLevel]!, line, 'Maaiveld (cm t.o.v. NAP)'),
      tubeTop: metres(fields[columns.tubeTop]!, line, 'Meetpunt (cm t.o.v. NAP)'),
      screenTop: oneScreenBound ? null : screenTop,
      screenBottom: oneScreenBound ? null : screenBottom,
    };
    this.periods.set(key, { tube, start, oneScreenBound });
  }

  /** A tube as a file without its metadata states it: no location, no elevations. */
  private unknownTube(location: string, filter: string, line: number): StatedTube {
    if (location === '' || filter === '') {
      throw new FileRefused({ line }, location === '' ? 'Locatie' : 'Filternummer', 'is empty');
    }
    return {
      identifier: dinoTube(location, filter),
      wellName: location,
      number: filter,
      location: null,
      unit: 'm',
      verticalDatum: 'NAP',
      groundLevel: null,
      tubeTop: null,
      screenTop: null,
      screenBottom: null,
      place: { line },
    };
  }

  private state(key: string, tube: StatedTube, oneScreenBound = false): string {
    this.sink.tube(tube);
    if (oneScreenBound) this.sink.note?.(ONE_SCREEN_BOUND);
    this.stated.set(key, tube.identifier);
    return tube.identifier;
  }

  private level(fields: string[], line: number): void {
    const columns = this.levels!;
    this.checkFields(fields, line);
    const location = fields[columns.location]!;
    const filter = fields[columns.filter]!;
    const key = `${location}\u0000${filter}`;
    const tube = this.stated.get(key) ?? this.state(key, this.unknownTube(location, filter, line));
    readDate(fields[columns.date]!, line, 'Peildatum');
    const text = fields[columns.level]!;
    if (text === '') {
      this.sink.skipPoints(NO_NAP_LEVEL);
      return;
    }
    const value = roundLevel(numberIn(text, line, 'Stand (cm t.o.v. NAP)') / 100);
    this.instant.seconds = this.midnight(dateParts.year, dateParts.month, dateParts.day);
    this.sink.level(line, tube, this.instant, value, this.options.status, 0);
  }

  private checkFields(fields: string[], line: number): void {
    if (fields.length < this.namedFields) {
      throw new FileRefused(
        { line },
        'row',
        `has ${fields.length} fields where the header names ${this.namedFields} (is the file cut off?)`,
      );
    }
  }
}

function columnsOf<T extends Record<string, string>>(names: string[], wanted: T, line: number): Columns<T> {
  const columns = {} as Columns<T>;
  const missing: string[] = [];
  for (const key of Object.keys(wanted) as (keyof T)[]) {
    const index = names.indexOf(normalized(wanted[key]!));
    if (index === -1) missing.push(wanted[key]!);
    columns[key] = index;
  }
  if (missing.length > 0) {
    throw new FileRefused(
      { line },
      'header',
      `lacks the columns ${missing.join(', ')} (in any case, dots aside)`,
    );
  }
  return columns;
}

/** Centimetres relative to NAP as metres, or null where the file states none. */
function metres(text: string, line: number, field: string): number | null {
  return text === '' ? null : roundLevel(numberIn(text, line, field) / 100);
}

const dateParts = { year: 0, month: 0, day: 0 };
const DATE = /^(\d{2})-(\d{2})-(\d{4})$/;

/** A DINO date (`DD-MM-YYYY`) into `dateParts`; returns its days since 1970, to compare periods by. */
function readDate(text: string, line: number, field: string): number {
  const match = DATE.exec(text);
  const day = Number(match?.[1]);
  const month = Number(match?.[2]);
  const year = Number(match?.[3]);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (match === null || date.getUTCDate() !== day || date.getUTCMonth() !== month - 1) {
    throw new FileRefused({ line }, field, `${shown(text)}: not a date (DD-MM-YYYY, as DINO writes them)`);
  }
  dateParts.year = year;
  dateParts.month = month;
  dateParts.day = day;
  return date.getTime() / 86_400_000;
}
