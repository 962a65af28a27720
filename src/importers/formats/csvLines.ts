/**
 * The lines of a CSV file as it streams in (chunks in, fields out), for the formats that are CSV: BRO's
 * exports of a GLD and DINO's files. Memory holds one chunk and one partial line, whatever the file's size.
 */
import { StringDecoder } from 'node:string_decoder';
import { splitQuotedLine } from '../measurements/csv/csvLine.js';
import { decimalProblem, readDecimal, readLongDecimal } from '../measurements/csv/decimal.js';
import { FileRefused, type LevelReader, roundLevel } from './reader.js';

/** Real lines are under a few hundred characters: a longer one means another kind of file. */
const MAX_LINE = 65_536;

export class CsvLines {
  /** Lines read so far. */
  count = 0;
  /** The text after the last line break: a line whose end has not arrived yet. */
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly onLine: (fields: string[], line: number) => void) {}

  write(chunk: Buffer): void {
    const text = this.partial + this.decoder.write(chunk);
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      this.line(text, start, newline);
      start = newline + 1;
    }
    this.partial = text.slice(start);
    if (this.partial.length > MAX_LINE) {
      throw new FileRefused(
        { line: this.count + 1 },
        'line',
        `longer than ${MAX_LINE.toLocaleString('en-US')} characters (is this the right file?)`,
      );
    }
  }

  /** The last line, which needs no line break. */
  end(): void {
    const text = this.partial + this.decoder.end();
    this.partial = '';
    if (text !== '') this.line(text, 0, text.length);
  }

  private line(text: string, start: number, end: number): void {
    const line = ++this.count;
    if (end > start && text.charCodeAt(end - 1) === 13 /* \r */) end--;
    if (line === 1 && text.charCodeAt(start) === 0xfeff /* byte order mark */) start++;
    this.onLine(fieldsOf(text.slice(start, end), line), line);
  }
}

/** A line's fields: split at commas, or by the quoting rules when it has a quote. */
export function fieldsOf(text: string, line: number): string[] {
  if (!text.includes('"')) return text.split(',');
  const split = splitQuotedLine(text);
  if (!split.ok) throw new FileRefused({ line }, 'line', split.reason);
  return split.fields;
}

/** A line with no text in any field: the separators of sections in BRO's and DINO's files. */
export const isBlank = (fields: readonly string[]): boolean => fields.every((field) => field === '');

/** `text` quoted for a message, cut short when long. */
export function shown(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** The number `text` states (any number of digits: the caller rounds), or the file is refused at `line`. */
export function numberIn(text: string, line: number, field: string): number {
  const value = readLongDecimal(text, 0, text.length);
  if (Number.isNaN(value)) throw new FileRefused({ line }, field, `${shown(text)}: ${decimalProblem(text)}`);
  return value;
}

/**
 * A level as `text` states it, rounded to 15 significant digits. A decimal of at most 15 reads back as
 * itself (readDecimal), so only a longer one (0.6709999999999999) takes the rounding's cost.
 */
export function levelIn(text: string, line: number, field: string): number {
  const value = readDecimal(text, 0, text.length);
  return Number.isNaN(value) ? roundLevel(numberIn(text, line, field)) : value;
}

/** A reader of a CSV format: each line's fields go to `line`, and `finish` follows the last line. */
export abstract class CsvReader implements LevelReader {
  private readonly csv = new CsvLines((fields, line) => this.line(fields, line));

  get lines(): number {
    return this.csv.count;
  }

  write(chunk: Buffer): void {
    this.csv.write(chunk);
  }

  end(): void {
    this.csv.end();
    this.finish(this.csv.count);
  }

  protected abstract line(fields: string[], line: number): void;
  protected abstract finish(lines: number): void;
}
