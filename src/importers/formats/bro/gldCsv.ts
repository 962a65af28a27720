/**
 * BRO's CSV exports of a GLD, for `gwapi import bro-gld`. The first line tells which of three it is:
 * - `objectsAsCsv` (the full report, `"BRO-ID",…`): the dossier, its tube (`put BRO-ID`, `put buisnummer`),
 *   then each observation's type and review level followed by its points (time, value, quality control);
 * - `seriesAsCsv` (`Tijdstip,…`): one row per time, a value column per kind of observation; no tube named;
 * - the `time,value,status_quality_control,censor_reason,censor_limit` form; no tube named.
 */
import { readDateTime, readInstant } from '../../../domain/datetime.js';
import { statusCode } from '../../../domain/status.js';
import { CsvReader, isBlank, levelIn, shown } from '../csvLines.js';
import { broTube } from '../identity.js';
import { FileRefused, type FormatOptions, type LevelSink, type ReaderFactory } from '../reader.js';
import { broStatus, CONTROL_READING, MISSING_VALUE, reviewPriority } from './status.js';

const PROVISIONAL = statusCode('provisional');
const REJECTED = statusCode('rejected');

/** How one export reads its lines after the first. */
interface Layout {
  row(fields: string[], line: number): void;
  end(lines: number): void;
}

export const gldCsvReader: ReaderFactory = (_file, sink, options) => new GldCsv(sink, options);

class GldCsv extends CsvReader {
  private layout: Layout | undefined;

  constructor(
    private readonly sink: LevelSink,
    private readonly options: FormatOptions,
  ) {
    super();
  }

  protected line(fields: string[], line: number): void {
    if (this.layout === undefined) this.layout = this.layoutOf(fields);
    else this.layout.row(fields, line);
  }

  protected finish(lines: number): void {
    if (this.layout === undefined) throw new FileRefused({ line: 1 }, 'header', 'the file is empty');
    this.layout.end(lines);
  }

  private layoutOf(header: string[]): Layout {
    switch (header[0]) {
      case 'BRO-ID':
        return new ObjectsAsCsv(this.sink, this.options);
      case 'Tijdstip':
        return new SeriesAsCsv(header, this.sink, this.options);
      case 'time':
        return new TimeValueCsv(header, this.sink, this.options);
      default:
        throw new FileRefused(
          { line: 1 },
          'header',
          "not one of BRO's CSV exports of a GLD (objectsAsCsv's \"BRO-ID\",…, seriesAsCsv's Tijdstip,… or " +
            `time,value,…); found ${shown(header.join(','))}`,
        );
    }
  }
}

/** Where `readTime` leaves the instant it read (reused: the sink copies what it keeps). */
const instant = { seconds: 0, micros: 0 };

const isDigit = (code: number) => code >= 48 && code <= 57;

/** Whether `text[start, end)` is digits only (and not empty). */
function digitsOnly(text: string, start: number, end: number): boolean {
  if (start >= end) return false;
  for (let i = start; i < end; i++) if (!isDigit(text.charCodeAt(i))) return false;
  return true;
}

/**
 * A BRO export's time: RFC 3339, with its offset also written without a colon (`+0200`, as BRO's
 * exports do), or milliseconds since 1970 (`seriesAsCsv` and the compact reports by default).
 */
function readTime(text: string, line: number, field: string): void {
  const length = text.length;
  if (length <= 16 && digitsOnly(text, text.charCodeAt(0) === 45 /* - */ ? 1 : 0, length)) {
    const milliseconds = Number(text);
    instant.seconds = Math.floor(milliseconds / 1000);
    instant.micros = (milliseconds - instant.seconds * 1000) * 1000;
    return;
  }
  const sign = length - 5;
  const signCode = text.charCodeAt(sign);
  const offsetWithoutColon =
    sign > 10 && (signCode === 43 || signCode === 45) && digitsOnly(text, sign + 1, length);
  const time = offsetWithoutColon ? `${text.slice(0, sign + 3)}:${text.slice(sign + 3)}` : text;
  const problem = readDateTime(time, 0, time.length);
  if (problem !== undefined) {
    throw new FileRefused(
      { line },
      field,
      `${shown(text)}: ${text === '' ? 'is empty' : `${problem}, or milliseconds since 1970`}`,
    );
  }
  instant.seconds = readInstant.seconds;
  instant.micros = readInstant.micros;
}

/** A layout of one header line and rows of its fields, of a tube the file does not name: `--tube`'s. */
abstract class RowsOfGivenTube {
  protected readonly tube: string;
  protected readonly header: string;
  private readonly fieldCount: number;

  constructor(fields: string[], layout: string, options: FormatOptions) {
    this.header = fields.join(',');
    this.fieldCount = fields.length;
    if (options.tube === undefined) {
      throw new FileRefused({ line: 1 }, 'tube', `${layout} names no tube: give it with --tube`);
    }
    this.tube = options.tube.toLowerCase();
  }

  protected checkFields(fields: string[], line: number): void {
    checkFieldCount(fields, this.fieldCount, this.header, line);
  }

  end(): void {}
}

/** Refuses a row cut short (a truncated file) or one with more fields than its header. */
function checkFieldCount(fields: string[], expected: number, header: string, line: number): void {
  if (fields.length !== expected) {
    throw new FileRefused(
      { line },
      'row',
      `expected ${expected} fields (${header}), found ${fields.length}${fields.length < expected ? ' (is the file cut off?)' : ''}`,
    );
  }
}

/** What a line of the full report starts a section with; the line after it holds its values. */
type Section = 'dossier' | 'tube' | 'observation';
const SECTION_LABELS: Record<string, Section> = {
  'BRO-ID': 'dossier',
  'put BRO-ID': 'tube',
  'observatie ID': 'observation',
};
const POINTS_HEADER = 'tijdstip meting,waterstand,status kwaliteitscontrole';

/**
 * The full report. Sections are separated by empty lines (`,,,,,`); an observation's points follow the
 * line `tijdstip meting,waterstand,status kwaliteitscontrole,…` up to the next empty line.
 */
class ObjectsAsCsv implements Layout {
  /** What the next line is: a section's values, the rest of a section, points, or a new section. */
  private expect: Section | 'rest' | 'points' | 'label' = 'dossier';
  private tube: string | undefined;
  private observationType = '';
  private reviewLevel = '';
  private observationLine = 0;
  private pointFields = 0;

  constructor(
    private readonly sink: LevelSink,
    private readonly options: FormatOptions,
  ) {}

  row(fields: string[], line: number): void {
    switch (this.expect) {
      case 'label':
        this.label(fields, line);
        return;
      case 'points':
        if (isBlank(fields)) this.expect = 'label';
        else this.point(fields, line);
        return;
      case 'rest':
        // The lines after a section's values that continue it (a tube's monitoring networks).
        if (isBlank(fields)) this.expect = 'label';
        return;
      case 'dossier':
        if (!/^GLD\d{12}$/.test(fields[0] ?? '')) {
          throw new FileRefused({ line }, 'BRO-ID', `${shown(fields[0] ?? '')}: not a GLD's BRO id`);
        }
        break;
      case 'tube':
        this.tube = this.namedTube(fields[0] ?? '', fields[1] ?? '', line);
        break;
      case 'observation':
        this.observationType = fields[3] ?? '';
        this.reviewLevel = fields[4] ?? '';
        this.observationLine = line;
        break;
    }
    this.expect = 'rest';
  }

  end(lines: number): void {
    if (this.expect === 'tube' || this.expect === 'observation' || this.expect === 'dossier') {
      throw new FileRefused(
        { line: lines },
        'row',
        `the file ends before the ${this.expect}'s values (is it cut off?)`,
      );
    }
  }

  private label(fields: string[], line: number): void {
    if (isBlank(fields)) return;
    const section = SECTION_LABELS[fields[0]!];
    if (section !== undefined) {
      this.expect = section;
      return;
    }
    if (!fields.join(',').startsWith(POINTS_HEADER)) {
      throw new FileRefused(
        { line },
        'row',
        `expected a section of BRO's objectsAsCsv report ("put BRO-ID", "observatie ID" or ` +
          `"tijdstip meting",…), found ${shown(fields.join(','))}`,
      );
    }
    if (this.tube === undefined)
      throw new FileRefused({ line }, 'put BRO-ID', 'points before the tube is named');
    if (this.observationLine === 0)
      throw new FileRefused({ line }, 'observatie ID', 'points before their observation');
    this.pointFields = fields.length;
    this.expect = 'points';
  }

  private namedTube(well: string, tubeNumber: string, line: number): string {
    if (well === '' || tubeNumber === '') {
      throw new FileRefused(
        { line },
        'put BRO-ID',
        'the tube is not named (a well BRO id and a tube number)',
      );
    }
    const tube = broTube(well, tubeNumber);
    const given = this.options.tube?.toLowerCase();
    if (given !== undefined && given !== tube) {
      throw new FileRefused(
        { line },
        'put BRO-ID',
        `the file is of ${well} tube ${tubeNumber} (${tube}), --tube gives ${given}`,
      );
    }
    return tube;
  }

  private point(fields: string[], line: number): void {
    checkFieldCount(fields, this.pointFields, `${POINTS_HEADER},…`, line);
    readTime(fields[0]!, line, 'tijdstip meting');
    const text = fields[1]!;
    if (text === '') {
      this.sink.skipPoints(MISSING_VALUE);
      return;
    }
    const value = levelIn(text, line, 'waterstand');
    // BRO's code is `controlemeting`; its exports are read whatever the case.
    if (this.observationType.toLowerCase() === 'controlemeting') {
      this.sink.skipPoints(CONTROL_READING);
      return;
    }
    const status = broStatus(fields[2]!, this.reviewLevel);
    this.sink.level(line, this.tube!, instant, value, status, reviewPriority(this.reviewLevel));
  }
}

/** A `seriesAsCsv` value column: `<kind> Waarde [m]`, and its `<kind> Opmerking` (quality control). */
interface ValueColumn {
  index: number;
  remark: number;
  status: number;
  priority: number;
  control: boolean;
}

const SERIES_COLUMN = /^(Voorlopige|Beoordeelde|Controle|Onbekend) (Waarde|Opmerking)(?: \[([^\]]*)\])?$/;

/** Each kind of value as a status and priority; a control reading is skipped. */
const SERIES_KINDS: Record<string, Omit<ValueColumn, 'index' | 'remark'>> = {
  Beoordeelde: {
    status: statusCode('approved'),
    priority: reviewPriority('volledigBeoordeeld'),
    control: false,
  },
  Voorlopige: { status: PROVISIONAL, priority: reviewPriority('voorlopig'), control: false },
  Onbekend: { status: PROVISIONAL, priority: reviewPriority('onbekend'), control: false },
  Controle: { status: PROVISIONAL, priority: 0, control: true },
};

class SeriesAsCsv extends RowsOfGivenTube implements Layout {
  private readonly columns: ValueColumn[] = [];

  constructor(
    fields: string[],
    private readonly sink: LevelSink,
    options: FormatOptions,
  ) {
    super(fields, "BRO's seriesAsCsv export", options);
    const remarks = new Map<string, number>();
    const values: { kind: string; index: number }[] = [];
    for (let index = 1; index < fields.length; index++) {
      const match = SERIES_COLUMN.exec(fields[index]!);
      if (match === null) {
        throw new FileRefused(
          { line: 1 },
          'header',
          `${shown(fields[index]!)}: not a column of BRO's seriesAsCsv (Voorlopige, Beoordeelde, Controle or ` +
            'Onbekend, then Waarde [m] or Opmerking)',
        );
      }
      const [, kind, role, unit] = match as unknown as [string, string, string, string | undefined];
      if (role === 'Opmerking') {
        remarks.set(kind, index);
        continue;
      }
      if (unit !== undefined && unit !== 'm') {
        throw new FileRefused(
          { line: 1 },
          fields[index]!,
          `unit ${shown(unit)}: levels are read in metres (m) only`,
        );
      }
      values.push({ kind, index });
    }
    for (const { kind, index } of values) {
      this.columns.push({ index, remark: remarks.get(kind) ?? -1, ...SERIES_KINDS[kind]! });
    }
  }

  row(fields: string[], line: number): void {
    this.checkFields(fields, line);
    readTime(fields[0]!, line, 'Tijdstip');
    let values = 0;
    for (const column of this.columns) {
      const text = fields[column.index]!;
      if (text === '') continue;
      values++;
      const value = levelIn(text, line, 'Waarde');
      if (column.control) {
        this.sink.skipPoints(CONTROL_READING);
        continue;
      }
      const status = column.remark >= 0 && fields[column.remark] === 'afgekeurd' ? REJECTED : column.status;
      this.sink.level(line, this.tube, instant, value, status, column.priority);
    }
    if (values === 0) this.sink.skipPoints(MISSING_VALUE);
  }
}

const TIME_VALUE_COLUMNS = ['time', 'value', 'status_quality_control', 'censor_reason', 'censor_limit'];

/** `time,value,status_quality_control,censor_reason,censor_limit`: a tube's points, with no review level. */
class TimeValueCsv extends RowsOfGivenTube implements Layout {
  private readonly value: number;
  private readonly qualityControl: number;

  constructor(
    fields: string[],
    private readonly sink: LevelSink,
    options: FormatOptions,
  ) {
    super(fields, `a ${TIME_VALUE_COLUMNS.join(',')} file`, options);
    const unknown = fields.find((field) => !TIME_VALUE_COLUMNS.includes(field));
    if (unknown !== undefined || new Set(fields).size !== fields.length || !fields.includes('value')) {
      throw new FileRefused(
        { line: 1 },
        'header',
        `expected the columns ${TIME_VALUE_COLUMNS.join(',')} (time and value required, each once); found ${shown(this.header)}`,
      );
    }
    this.value = fields.indexOf('value');
    this.qualityControl = fields.indexOf('status_quality_control');
  }

  row(fields: string[], line: number): void {
    this.checkFields(fields, line);
    readTime(fields[0]!, line, 'time');
    const text = fields[this.value]!;
    if (text === '') {
      this.sink.skipPoints(MISSING_VALUE);
      return;
    }
    const value = levelIn(text, line, 'value');
    const status = this.qualityControl >= 0 ? broStatus(fields[this.qualityControl]!, '') : PROVISIONAL;
    this.sink.level(line, this.tube, instant, value, status, reviewPriority(''));
  }
}
