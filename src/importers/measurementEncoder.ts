/**
 * CSV of measurements in, binary COPY rows out, one stream chunk at a time: whatever the file's size,
 * memory holds one chunk and one partial line. Every row is checked here (header, column count, UUID,
 * RFC 3339 instant, decimal value); bad rows go to the error collector with their line and are left out,
 * good rows are written with their line number so the checks done later in SQL can name lines too.
 */

import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parseDateTime } from '../domain/datetime.js';
import { COPY_HEADER, COPY_TRAILER, writeInt64, writeTimestamp } from './copyBinary.js';
import { splitQuotedLine } from './csvLine.js';
import { decimalProblem, parseDecimal } from './decimal.js';
import { ForwardSearch } from './forwardSearch.js';
import { type ErrorCollector, ImportRejected } from './importErrors.js';
import { writeUuid } from './uuidBytes.js';

export const HEADER = 'tubeIdentifier,observedAt,value';
const COLUMNS = HEADER.split(',');

/** Field count, then (length, bytes) of line int8, tube uuid, observed_at timestamptz, value float8. */
const ROW_BYTES = 2 + (4 + 8) + (4 + 16) + (4 + 8) + (4 + 8);
/** Rows are gathered into blocks this large, so COPY gets few large writes rather than one per row. */
const BLOCK_BYTES = 1 << 20;
/** Good lines are under 100 characters; a longer one means this is not our CSV (and must not fill memory). */
const MAX_LINE = 65_536;
/** Far more tubes than a network has; a file with more identifiers is checked row by row in SQL. */
const MAX_KEPT_TUBES = 100_000;

export class MeasurementEncoder extends Transform {
  /** Rows checked and passed on to COPY. */
  rows = 0;
  /** Lines read so far, the header included. */
  lines = 0;
  /**
   * The distinct tube identifiers of the good rows (32 hex digits), so that SQL can look up a handful
   * of identifiers instead of joining every staged row with the tubes; undefined once there are too
   * many to keep (then SQL checks every row).
   */
  tubes: Set<string> | undefined = new Set();
  /** The previous good row's tube, as text and as bytes. */
  private lastTubeText = '';
  private readonly lastTube = Buffer.alloc(16);
  private readonly decoder = new StringDecoder('utf8');
  /** The text after the last line break seen: the start of a line whose end has not arrived yet. */
  private partial = '';
  /** The text being split into lines, and searches for commas and quotes in it. */
  private text = '';
  private readonly commas = new ForwardSearch(',');
  private readonly quotes = new ForwardSearch('"');
  private block = Buffer.allocUnsafe(BLOCK_BYTES);
  private used = 0;
  /** Where the block's unsent rows start. */
  private sent = 0;

  constructor(
    private readonly file: string,
    private readonly errors: ErrorCollector,
    /** Called after each chunk with the lines read so far (for a progress line). */
    private readonly onLines: (lines: number) => void = () => {},
    private readonly maxKeptTubes = MAX_KEPT_TUBES,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    try {
      const text = this.use(this.partial + this.decoder.write(chunk));
      let start = 0;
      for (let newline = text.indexOf('\n', start); newline !== -1; newline = text.indexOf('\n', start)) {
        this.line(start, newline);
        start = newline + 1;
      }
      this.partial = text.slice(start);
      if (this.partial.length > MAX_LINE) this.refuseLongLine();
      this.sendBlock();
      this.onLines(this.lines);
      done();
    } catch (error) {
      done(error as Error);
    }
  }

  override _flush(done: TransformCallback): void {
    try {
      const rest = this.use(this.partial + this.decoder.end());
      // A final line break is optional: a last line without one is still a line.
      if (rest !== '') this.line(0, rest.length);
      if (this.lines === 0) this.refuseHeader(rest === '' ? 'missing: the input is empty' : undefined, '');
      this.sendBlock();
      this.push(COPY_TRAILER);
      this.onLines(this.lines);
      done();
    } catch (error) {
      done(error as Error);
    }
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
    if (second >= end || this.commas.next(second + 1) < end) {
      let fields = 1;
      for (let i = first; i < end; i = this.commas.next(i + 1)) fields++;
      this.wrongFieldCount(line, fields);
      return;
    }
    this.row(line, text, start, first, text.slice(first + 1, second), text.slice(second + 1, end));
  }

  private quotedRow(line: number, text: string): void {
    const split = splitQuotedLine(text);
    if (!split.ok) {
      this.errors.add(line, 'row', split.reason);
      return;
    }
    const [tube = '', observedAt = '', value = ''] = split.fields;
    if (split.fields.length !== 3) {
      this.wrongFieldCount(line, split.fields.length);
      return;
    }
    this.row(line, tube, 0, tube.length, observedAt, value);
  }

  /** Checks one row, the tube identifier given as `tubeText[tubeStart, tubeEnd)`, and writes it if good. */
  private row(
    line: number,
    tubeText: string,
    tubeStart: number,
    tubeEnd: number,
    observedAt: string,
    value: string,
  ) {
    if (this.used + ROW_BYTES > BLOCK_BYTES) this.newBlock();
    const block = this.block;
    const at = this.used;
    // Written in place: a bad row is simply not counted in `used` and is overwritten by the next one.
    // Rows of one tube usually come together: the same text as the row before needs no decoding.
    const sameText =
      this.rows > 0 && tubeEnd - tubeStart === 36 && tubeText.startsWith(this.lastTubeText, tubeStart);
    if (sameText) this.lastTube.copy(block, at + 18);
    let good = sameText || writeUuid(tubeText, tubeStart, tubeEnd, block, at + 18);
    if (!good) this.errors.add(line, 'tubeIdentifier', 'not a UUID');
    const instant = parseDateTime(observedAt);
    if (!instant.ok) {
      good = false;
      this.errors.add(line, 'observedAt', instant.reason);
    }
    const number = parseDecimal(value);
    if (Number.isNaN(number)) {
      good = false;
      this.errors.add(line, 'value', decimalProblem(value));
    }
    if (!good || !instant.ok) return;
    block.writeInt16BE(4, at);
    block.writeInt32BE(8, at + 2);
    writeInt64(block, at + 6, line);
    block.writeInt32BE(16, at + 14);
    block.writeInt32BE(8, at + 34);
    writeTimestamp(block, at + 38, instant.instant);
    block.writeInt32BE(8, at + 46);
    block.writeDoubleBE(number, at + 50);
    this.used = at + ROW_BYTES;
    if (!sameText) {
      this.lastTubeText = tubeText.slice(tubeStart, tubeEnd);
      if (this.rows === 0 || !sameBytes(block, at + 18, this.lastTube)) this.newTube(block, at + 18);
    }
    this.rows++;
  }

  /** Only a change of tube costs a string and a set lookup. */
  private newTube(block: Buffer, at: number): void {
    block.copy(this.lastTube, 0, at, at + 16);
    if (!this.tubes) return;
    this.tubes.add(block.toString('hex', at, at + 16));
    if (this.tubes.size > this.maxKeptTubes) this.tubes = undefined;
  }

  private header(text: string): void {
    const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    const quoted = body.includes('"') ? splitQuotedLine(body) : undefined;
    const fields = quoted ? (quoted.ok ? quoted.fields : []) : body.split(',');
    if (fields.length !== COLUMNS.length || fields.some((field, i) => field !== COLUMNS[i])) {
      this.refuseHeader(undefined, body);
    }
    this.push(COPY_HEADER);
  }

  /** Without the right header the columns cannot be trusted: stop at once instead of reading on. */
  private refuseHeader(reason: string | undefined, found: string): never {
    const shown = found.length > 80 ? `${found.slice(0, 80)}…` : found;
    this.errors.add(1, 'header', reason ?? `expected exactly ${HEADER}, found ${JSON.stringify(shown)}`);
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
    this.errors.add(line, 'row', `expected 3 fields (${HEADER}), found ${found}`);
  }

  private newBlock(): void {
    this.sendBlock();
    this.block = Buffer.allocUnsafe(BLOCK_BYTES);
    this.used = 0;
    this.sent = 0;
  }

  /** Passes on the rows written since the last send; the rest of the block stays ours to fill. */
  private sendBlock(): void {
    if (this.used > this.sent) this.push(this.block.subarray(this.sent, this.used));
    this.sent = this.used;
  }
}

function sameBytes(block: Buffer, at: number, uuid: Buffer): boolean {
  for (let i = 0; i < 16; i++) if (block[at + i] !== uuid[i]) return false;
  return true;
}
