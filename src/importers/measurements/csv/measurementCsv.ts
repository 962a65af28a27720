/**
 * The measurements CSV, read one stream chunk at a time: whatever the file's size, memory holds one
 * chunk and one partial line. Every row is checked here (header, column count, UUID, RFC 3339 instant,
 * decimal value, status when the file has that column); bad rows go to the error collector with their
 * line, good rows to a `RowSink`, which encodes them for the COPY of one of the import's two paths.
 */

import { StringDecoder } from 'node:string_decoder';
import { type Instant, readDateTime, readInstant } from '../../../domain/datetime.js';
import { DEFAULT_STATUS, STATUS_CHOICES, STATUSES, statusCode } from '../../../domain/status.js';
import { type ErrorCollector, ImportRejected } from '../../importErrors.js';
import type { RowReader } from '../rowReader.js';
import { splitQuotedLine } from './csvLine.js';
import { decimalProblem, readDecimal } from './decimal.js';
import { ForwardSearch } from './forwardSearch.js';
import { writeUuid } from './uuidBytes.js';

export const HEADER = 'tubeIdentifier,observedAt,value';
/** The header of a file that states each measurement's status. */
export const HEADER_WITH_STATUS = `${HEADER},status`;

/** A row's status as its code, for a file without the column. */
const DEFAULT_STATUS_CODE = statusCode(DEFAULT_STATUS);
/** The status start of a row in a file without the column. */
const NO_STATUS = -1;

/** The code of the status `text[start, end)` names, or undefined. */
function statusAt(text: string, start: number, end: number): number | undefined {
  for (let code = 0; code < STATUSES.length; code++) {
    const status = STATUSES[code]!;
    if (end - start === status.length && text.startsWith(status, start)) return code;
  }
  return undefined;
}

/** Good lines are under 100 characters; a longer one means this is not our CSV (and must not fill memory). */
const MAX_LINE = 65_536;

export interface RowSink {
  /**
   * One good row. `tube` holds its tube identifier as 16 bytes (the same buffer every time: copy what
   * is kept); `newTube` tells whether it differs from the previous good row's, which is rare. `instant`
   * too is the same object every time. `status` is the stored code: the file's, or the default for a
   * file without the column. Of two rows of one tube and instant, an import that keeps one (a
   * format's, formats/write.ts) keeps the higher `priority` (default 0), then the later line.
   */
  row(
    line: number,
    tube: Buffer,
    newTube: boolean,
    instant: Instant,
    value: number,
    status: number,
    priority?: number,
  ): void;
}

export class MeasurementCsv implements RowReader {
  /** Good rows passed on to the sink. */
  rows = 0;
  /** Lines read so far, the header included. */
  lines = 0;
  /** Whether the header has the status column: known once the first line is read. */
  hasStatus = false;
  /** The header the file has, which its rows' fields follow. */
  private headerLine = HEADER;
  /** The previous good row's tube, as text and as bytes. */
  private lastTubeText = '';
  private readonly lastTube = Buffer.alloc(16);
  /** Where a row's identifier is decoded before it is known to be good. */
  private readonly tube = Buffer.alloc(16);
  private readonly decoder = new StringDecoder('utf8');
  /** The text after the last line break seen: the start of a line whose end has not arrived yet. */
  private partial = '';
  /** The text being split into lines, and searches for commas and quotes in it. */
  private text = '';
  private readonly commas = new ForwardSearch(',');
  private readonly quotes = new ForwardSearch('"');

  constructor(
    private readonly file: string,
    private readonly errors: ErrorCollector,
    private readonly sink: RowSink,
  ) {}

  /** Reads the complete lines of `chunk` (with what was left of the previous one). */
  write(chunk: Buffer): void {
    const decoded = this.decoder.write(chunk);
    let start = 0;
    if (this.partial !== '') {
      // The line begun in the chunk before is read on its own, so that the chunk's text is read as it
      // came: joined to the partial line it would be copied whole, and every read of it would cost more.
      const newline = decoded.indexOf('\n');
      if (newline === -1) {
        this.partial += decoded;
        if (this.partial.length > MAX_LINE) this.refuseLongLine();
        return;
      }
      const line = this.use(this.partial + decoded.slice(0, newline));
      this.line(0, line.length);
      start = newline + 1;
    }
    const text = this.use(decoded);
    for (let newline = text.indexOf('\n', start); newline !== -1; newline = text.indexOf('\n', start)) {
      this.line(start, newline);
      start = newline + 1;
    }
    this.partial = text.slice(start);
    if (this.partial.length > MAX_LINE) this.refuseLongLine();
  }

  /** Reads the last line, which needs no line break. */
  end(): void {
    const rest = this.use(this.partial + this.decoder.end());
    this.partial = '';
    if (rest !== '') this.line(0, rest.length);
    if (this.lines === 0) this.refuseHeader(rest === '' ? 'missing: the input is empty' : undefined, '');
  }

  private use(text: string): string {
    this.text = text;
    this.commas.reset(text);
    this.quotes.reset(text);
    return text;
  }

  /** One line, `text[start, end)` without its line break. */
  private line(start: number, end: number): void {
    const text = this.text;
    const line = ++this.lines;
    if (end > start && text.charCodeAt(end - 1) === 13 /* \r */) end--;
    if (line === 1) {
      this.header(text.slice(start, end));
      return;
    }
    if (end === start) {
      this.errors.add(line, 'row', 'empty line');
      return;
    }
    if (this.quotes.next(start) < end) {
      this.quotedRow(line, text.slice(start, end));
      return;
    }
    const first = this.commas.next(start);
    const second = first < end ? this.commas.next(first + 1) : end;
    const last = this.hasStatus && second < end ? this.commas.next(second + 1) : second;
    if (last >= end || this.commas.next(last + 1) < end) {
      let fields = 1;
      for (let i = first; i < end; i = this.commas.next(i + 1)) fields++;
      this.wrongFieldCount(line, fields);
      return;
    }
    const valueEnd = this.hasStatus ? last : end;
    const statusStart = this.hasStatus ? last + 1 : NO_STATUS;
    this.row(line, text, start, first, first + 1, second, second + 1, valueEnd, statusStart, end);
  }

  private quotedRow(line: number, text: string): void {
    const split = splitQuotedLine(text);
    if (!split.ok) {
      this.errors.add(line, 'row', split.reason);
      return;
    }
    if (split.fields.length !== (this.hasStatus ? 4 : 3)) {
      this.wrongFieldCount(line, split.fields.length);
      return;
    }
    // The unquoted fields one after the other: row() reads each field between its bounds only.
    const [tube, observedAt, value] = split.fields.map((field) => field.length) as [number, number, number];
    const joined = split.fields.join(',');
    const valueEnd = tube + 1 + observedAt + 1 + value;
    this.row(
      line,
      joined,
      0,
      tube,
      tube + 1,
      tube + 1 + observedAt,
      tube + 1 + observedAt + 1,
      valueEnd,
      this.hasStatus ? valueEnd + 1 : NO_STATUS,
      joined.length,
    );
  }

  /**
   * Checks one row, its fields given by their bounds in `text` (the status from `statusStart` to `end`,
   * or NO_STATUS in a file without the column), and passes it on if good. Nothing is sliced out of the
   * line unless the row is bad.
   */
  private row(
    line: number,
    text: string,
    tubeStart: number,
    tubeEnd: number,
    observedStart: number,
    observedEnd: number,
    valueStart: number,
    valueEnd: number,
    statusStart: number,
    end: number,
  ) {
    // Rows of one tube usually come together: the same text as the row before needs no decoding.
    const sameText =
      this.rows > 0 && tubeEnd - tubeStart === 36 && text.startsWith(this.lastTubeText, tubeStart);
    let good = sameText || writeUuid(text, tubeStart, tubeEnd, this.tube, 0);
    if (!good) this.errors.add(line, 'tubeIdentifier', 'not a UUID');
    const instantProblem = readDateTime(text, observedStart, observedEnd);
    if (instantProblem !== undefined) {
      good = false;
      this.errors.add(line, 'observedAt', instantProblem);
    }
    const number = readDecimal(text, valueStart, valueEnd);
    if (Number.isNaN(number)) {
      good = false;
      this.errors.add(line, 'value', decimalProblem(text.slice(valueStart, valueEnd)));
    }
    const code = statusStart === NO_STATUS ? DEFAULT_STATUS_CODE : statusAt(text, statusStart, end);
    if (code === undefined) {
      good = false;
      this.errors.add(line, 'status', statusProblem(text.slice(statusStart, end)));
    }
    if (!good || code === undefined) return;
    let newTube = false;
    if (!sameText) {
      this.lastTubeText = text.slice(tubeStart, tubeEnd);
      newTube = this.rows === 0 || !this.tube.equals(this.lastTube);
      if (newTube) this.tube.copy(this.lastTube);
    }
    this.rows++;
    this.sink.row(line, this.lastTube, newTube, readInstant, number, code);
  }

  private header(text: string): void {
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const quoted = body.includes('"') ? splitQuotedLine(body) : undefined;
    const fields = quoted ? (quoted.ok ? quoted.fields : []) : body.split(',');
    const header = [HEADER, HEADER_WITH_STATUS].find((columns) => sameFields(fields, columns.split(',')));
    if (header === undefined) this.refuseHeader(undefined, body);
    this.hasStatus = header === HEADER_WITH_STATUS;
    this.headerLine = header;
  }

  /** Without the right header the columns cannot be trusted: stop at once instead of reading on. */
  private refuseHeader(reason: string | undefined, found: string): never {
    const shown = found.length > 80 ? `${found.slice(0, 80)}…` : found;
    this.errors.add(
      1,
      'header',
      reason ?? `expected exactly ${HEADER} or ${HEADER_WITH_STATUS}, found ${JSON.stringify(shown)}`,
    );
    throw new ImportRejected(this.file, this.errors);
  }

  private refuseLongLine(): never {
    this.errors.add(
      this.lines + 1,
      'row',
      `longer than ${MAX_LINE.toLocaleString('en-US')} characters (is this the right file?)`,
    );
    throw new ImportRejected(this.file, this.errors);
  }

  private wrongFieldCount(line: number, found: number): void {
    const expected = this.hasStatus ? 4 : 3;
    this.errors.add(line, 'row', `expected ${expected} fields (${this.headerLine}), found ${found}`);
  }
}

const sameFields = (found: string[], expected: string[]) =>
  found.length === expected.length && found.every((field, i) => field === expected[i]);

function statusProblem(status: string): string {
  if (status === '') return `is empty (expected ${STATUS_CHOICES})`;
  const shown = status.length > 40 ? `${status.slice(0, 40)}…` : status;
  return `unknown status ${JSON.stringify(shown)} (expected ${STATUS_CHOICES})`;
}
