/**
 * Delft-FEWS PI-XML time series (`TimeSeries`, PI 1.x) as levels: each `series` is a header, then its
 * `event`s. A series in metres is a tube's levels (`urn:fews:{locationId}`, tube 1); a series in other
 * units is refused, with its location and parameter named, and a file none of whose series is levels
 * is refused whole. Read as a stream of SAX events: nothing but the current header is kept.
 */
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { readDateAndTime, readDateTime, readInstant } from '../../../domain/datetime.js';
import { statusCode } from '../../../domain/status.js';
import { readDecimal } from '../../measurements/csv/decimal.js';
import { ElementRuns, lineBreaks } from '../elementRuns.js';
import { fewsTube } from '../identity.js';
import {
  FileRefused,
  type FormatOptions,
  type LevelReader,
  type LevelSink,
  type ReaderFactory,
  roundLevel,
} from '../reader.js';
import { datumOfUnits, HEADER_FIELDS, type HeaderText, headerNumber, locationOf } from './seriesHeader.js';

const PROVISIONAL = statusCode('provisional');
const REJECTED = statusCode('rejected');

/** PI's quality flags: 0–2 reliable, 3–5 doubtful, 6–8 unreliable, 9 missing. */
const MISSING_FLAG = 9;
const FIRST_UNRELIABLE_FLAG = 6;

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * An event as PI writes them: attributes in double quotes in any order, values without markup, entities,
 * or characters XML normalizes or refuses (which saxes reads or refuses); XML's whitespace only.
 */
const EVENT =
  /<event((?:[ \t\r\n]+[A-Za-z_][\w.:-]*[ \t\r\n]*=[ \t\r\n]*"[ !#-%'-;=-\ufffd]*")*)[ \t\r\n]*\/>/g;
const EVENT_ATTRIBUTE = /[ \t\r\n]+([A-Za-z_][\w.:-]*)[ \t\r\n]*=[ \t\r\n]*"([^"]*)"/y;

/** `<timeZone>` is hours east of UTC; the earth's zones lie within these. */
const MOST_HOURS_FROM_UTC = 14;

/**
 * The reasons points are skipped under, as the report counts them: noun phrases ending in their noun
 * (`3 missing values`); a series refused for its units is named after a colon.
 */
export const SKIPPED = {
  noValue: 'missing value',
  flaggedMissing: 'flag 9 (missing) value',
  notSelected: 'unselected-parameter value',
  otherFlag: (flag: number) => `flag ${flag} value`,
  notMetres: (units: string | undefined, series: string) =>
    `${units ? `${units} value` : 'value without units'}: ${series}`,
} as const;

/** Where a series' events go: a tube, or a reason they are all skipped under. */
type SeriesTarget = { identifier: string } | { skipped: string };

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

class FewsReader implements LevelReader {
  private readonly parser = new SaxesParser({ xmlns: false, position: true });
  private readonly decoder = new StringDecoder('utf8');
  /** Local names of the open elements, the root first. */
  private readonly open: string[] = [];
  private started = false;
  /** The parser counts from 1 again once closed. */
  private lastLine: number | undefined;
  private rootClosedAt = 0;
  private seriesIndex = 0;
  private eventIndex = 0;
  private offsetSeconds = 0;
  private geoDatum: string | undefined;
  /** The text of the element being read, when it is one this reader reads (`timeZone`, a header field). */
  private text: string | undefined;
  private header: HeaderText = {};
  private target: SeriesTarget | undefined;
  private missingValue = Number.NaN;
  private eventsOfSeries = 0;
  /** Per location: its tube's identifier (one string object for all its levels) and datum. */
  /** The value of the event being read, once read. */
  private eventLevel = 0;
  private readonly runs = new ElementRuns(
    EVENT,
    (text) => this.parser.write(text),
    (match) => this.readRun(match),
  );
  private readonly tubes = new Map<string, { identifier: string; datum: string; parameterId: string }>();
  private readonly skipped = new Map<string, number>();
  /** The first few series refused for their units, for the refusal of a file that has no other. */
  private readonly refusedSeries: string[] = [];
  private refusedSeriesCount = 0;

  constructor(
    private readonly sink: LevelSink,
    private readonly options: FormatOptions,
  ) {
    const parser = this.parser;
    parser.on('error', (error) => {
      const message = error.message.replace(/^\d+:\d+: /, '');
      throw this.refused(
        'XML',
        message.startsWith('unclosed tag')
          ? `${message}: the file ends before it closes (truncated?)`
          : message,
      );
    });
    parser.on('xmldecl', ({ encoding }) => {
      if (encoding !== undefined && !/^(utf-?8|us-ascii)$/i.test(encoding)) {
        throw this.refused(
          'encoding',
          `${encoding}: only UTF-8 is read (convert the file first, e.g. with iconv)`,
        );
      }
    });
    parser.on('opentag', (tag) => {
      this.runs.tagEnded(parser.position);
      this.opened(tag);
    });
    parser.on('closetag', (tag) => {
      this.runs.tagEnded(parser.position);
      this.closed(localName(tag.name));
    });
    parser.on('cdata', (text) => {
      if (this.text !== undefined) this.text += text;
    });
  }

  get lines(): number {
    return this.lastLine ?? this.parser.line + this.runs.linesPassed;
  }

  /**
   * Another format (a CSV, a JSON) is refused at its first character, where the XML parser would only
   * object once it found no root element at the end.
   */
  private start(text: string): void {
    const first = text.search(/[^\s\uFEFF]/);
    if (first < 0) return;
    this.started = true;
    if (text[first] !== '<') {
      const line = text.slice(0, first).split('\n').length;
      const opening = text.slice(first, first + 40).split('\n')[0];
      throw new FileRefused(
        { line },
        'XML',
        `not XML: the file starts with ${JSON.stringify(opening)}, not "<": \`gwapi import fews\` reads Delft-FEWS PI-XML`,
      );
    }
  }

  write(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    if (!this.started) this.start(text);
    this.runs.feed(text);
  }

  end(): void {
    this.runs.feed(this.decoder.end());
    this.lastLine = this.lines;
    this.parser.close();
    if (this.tubes.size === 0) {
      throw new FileRefused(
        { line: this.rootClosedAt, path: 'TimeSeries' },
        'series',
        this.nothingToImport(),
      );
    }
    for (const [reason, count] of this.skipped) if (count > 0) this.sink.skipPoints(reason, count);
  }

  /** Text is handed over only while it is read: else saxes would slice the blanks between all events. */
  private readonly appendText = (text: string): void => {
    this.text += text;
  };

  private capture(): void {
    this.text = '';
    this.parser.on('text', this.appendText);
  }

  private opened(tag: SaxesTagPlain): void {
    const name = tag.name === 'event' ? 'event' : localName(tag.name);
    const depth = this.open.length;
    this.open.push(name);
    if (depth === 2 && name === 'event' && this.open[1] === 'series') {
      this.eventIndex++;
      const { date, time, value, flag } = tag.attributes;
      const status = this.event(date, time, value, flag);
      if (status >= 0) this.passLevel(this.lines, status);
      return;
    }
    if (depth === 0) {
      if (name !== 'TimeSeries') {
        throw this.refused(
          name,
          `the root element is ${name}, not TimeSeries: not a FEWS PI-XML time series file`,
        );
      }
    } else if (depth === 1) {
      if (name === 'series') {
        this.seriesIndex++;
        this.eventIndex = 0;
        this.header = {};
        this.target = undefined;
      } else if (name === 'timeZone' || name === 'geoDatum') this.capture();
    } else if (depth === 3 && this.open[2] === 'header' && HEADER_FIELDS.has(name)) this.capture();
  }

  private closed(name: string): void {
    const depth = this.open.length - 1;
    this.open.pop();
    if (name === 'event') return;
    const text = this.text;
    if (text !== undefined) {
      this.text = undefined;
      this.parser.off('text');
    }
    if (depth === 0) this.rootClosedAt = this.lines;
    else if (depth === 1) {
      if (name === 'timeZone' && text !== undefined) this.timeZone(text);
      else if (name === 'geoDatum' && text !== undefined) this.geoDatum = text.trim();
      else if (name === 'series') this.seriesEnded();
    } else if (depth === 2 && name === 'header') this.headerEnded();
    else if (depth === 3 && text !== undefined) this.header[name as keyof HeaderText] = text.trim();
  }

  private timeZone(text: string): void {
    const hours = headerNumber(text);
    if (typeof hours === 'string') throw this.refused('timeZone', `${hours} (hours from UTC, such as 1.0)`);
    if (Math.abs(hours) > MOST_HOURS_FROM_UTC)
      throw this.refused('timeZone', `${hours} hours is not a time zone`);
    this.offsetSeconds = Math.round(hours * 3600);
  }

  private headerEnded(): void {
    const { locationId, parameterId, units, missVal } = this.header;
    if (!locationId) throw this.refused('locationId', 'the header names no location');
    if (!parameterId) throw this.refused('parameterId', 'the header names no parameter');
    this.missingValue = Number.NaN;
    if (missVal !== undefined && missVal !== 'NaN' && missVal !== '') {
      const missing = headerNumber(missVal);
      if (typeof missing === 'string') throw this.refused('missVal', missing);
      this.missingValue = missing;
    }
    const selected = this.options.parameters;
    if (selected !== undefined && !selected.includes(parameterId)) {
      this.target = { skipped: SKIPPED.notSelected };
      return;
    }
    const datum = datumOfUnits(units, this.options.datum);
    if (datum === undefined) {
      const stated = units ? `in ${units}` : 'without units';
      const series = `locationId ${locationId}, parameterId ${parameterId}`;
      if (this.refusedSeriesCount++ < 3) this.refusedSeries.push(`${series} (${stated})`);
      this.target = { skipped: SKIPPED.notMetres(units, series) };
      return;
    }
    this.target = { identifier: this.tubeOf(locationId, parameterId, datum) };
  }

  /** States a location's tube the first time a series of it is read; its levels share one datum. */
  private tubeOf(locationId: string, parameterId: string, datum: string): string {
    const known = this.tubes.get(locationId);
    if (known !== undefined) {
      if (known.datum !== datum) {
        throw this.refused(
          'units',
          `locationId ${locationId}: parameterId ${known.parameterId} is relative to ${known.datum}, ` +
            `${parameterId} to ${datum}; import one of them (--parameter)`,
        );
      }
      return known.identifier;
    }
    const located = locationOf(this.header, this.geoDatum);
    if ('reason' in located) throw this.refused(located.field, located.reason);
    const identifier = fewsTube(locationId);
    this.tubes.set(locationId, { identifier, datum, parameterId });
    this.sink.tube({
      identifier,
      wellName: locationId,
      number: '1',
      ...(located.location !== undefined ? { location: located.location } : {}),
      unit: 'm',
      verticalDatum: datum,
      place: this.place(),
    });
    return identifier;
  }

  private seriesEnded(): void {
    const target = this.target;
    if (target === undefined) throw this.refused('header', 'the series has no header');
    if ('skipped' in target) this.skipPoints(target.skipped, this.eventsOfSeries);
    this.eventsOfSeries = 0;
  }

  /**
   * An event matched (EVENT) where saxes stands between two elements, read; false (nothing done) when
   * saxes is to read it: outside a series, another shape, or one refused (saxes refuses it with its
   * place).
   */
  private readRun(match: RegExpExecArray): boolean {
    if (this.open.length !== 2 || this.open[1] !== 'series') return false;
    const attributes = match[1]!;
    let date: string | undefined;
    let time: string | undefined;
    let value: string | undefined;
    let flag: string | undefined;
    let others: string[] | undefined;
    EVENT_ATTRIBUTE.lastIndex = 0;
    for (let at = 0; at < attributes.length; at = EVENT_ATTRIBUTE.lastIndex) {
      const attribute = EVENT_ATTRIBUTE.exec(attributes)!;
      const name = attribute[1]!;
      const text = attribute[2]!;
      // A repeated attribute is saxes's to refuse.
      if (name === 'date') {
        if (date !== undefined) return false;
        date = text;
      } else if (name === 'time') {
        if (time !== undefined) return false;
        time = text;
      } else if (name === 'value') {
        if (value !== undefined) return false;
        value = text;
      } else if (name === 'flag') {
        if (flag !== undefined) return false;
        flag = text;
      } else if (others?.includes(name)) return false;
      else {
        others ??= [];
        others.push(name);
      }
    }
    let status: number;
    try {
      status = this.event(date, time, value, flag);
    } catch (error) {
      if (error instanceof FileRefused) return false;
      throw error;
    }
    this.eventIndex++;
    if (status >= 0) this.passLevel(this.lines + lineBreaks(match[0], match[0].length), status);
    return true;
  }

  /** The event's level, read by `event`, passed on. */
  private passLevel(line: number, status: number): void {
    const target = this.target as { identifier: string };
    this.sink.level(line, target.identifier, readInstant, this.eventLevel, status, 0);
  }

  /**
   * Reads an event: its status with its value in `level` and its time in `readInstant`, or -1 when it
   * is skipped (counted). Refuses it before doing anything else.
   */
  private event(
    date: string | undefined,
    time: string | undefined,
    value: string | undefined,
    flag: string | undefined,
  ): number {
    const target = this.target;
    if (target === undefined) throw this.refused('header', 'an event before the series header');
    if ('skipped' in target) {
      this.eventsOfSeries++;
      return -1;
    }
    if (date === undefined) throw this.refused('date', 'the event has no date');
    if (time === undefined) throw this.refused('time', 'the event has no time');
    if (value === undefined) throw this.refused('value', 'the event has no value');
    // The common value (a plain decimal of at most 15 digits) is read without a slice, exactly;
    // others (NaN, more digits, an exponent) are read whole and rounded to 15 digits.
    let level = readDecimal(value, 0, value.length);
    if (Number.isNaN(level) && value !== 'NaN') {
      level = DECIMAL.test(value) ? roundLevel(Number(value)) : Number.NaN;
      if (!Number.isFinite(level)) throw this.refused('value', `"${value}" is not a number`);
    }
    if (Number.isNaN(level) || level === this.missingValue) {
      this.skipPoints(SKIPPED.noValue, 1);
      return -1;
    }
    const status = this.statusOf(flag);
    if (status < 0) return -1;
    // Else one RFC 3339 text checks both; their own shapes only name the one at fault.
    const problem = readDateAndTime(date, time)
      ? undefined
      : readDateTime(`${date}T${time}Z`, 0, date.length + time.length + 2);
    if (problem !== undefined) {
      if (!DATE.test(date)) throw this.refused('date', `"${date}" is not a date (YYYY-MM-DD)`);
      if (!TIME.test(time)) throw this.refused('time', `"${time}" is not a time (HH:MM:SS)`);
      throw this.refused('date', `${date} ${time}: ${problem}`);
    }
    readInstant.seconds -= this.offsetSeconds;
    this.eventLevel = level;
    return status;
  }

  /** The status of a flag (absent: 0, original reliable), or -1 when the point is skipped. */
  private statusOf(flag: string | undefined): number {
    let code = 0;
    if (flag !== undefined) {
      const digit = flag.length === 1 ? flag.charCodeAt(0) - 48 : -1;
      code = digit >= 0 && digit <= 9 ? digit : /^\d+$/.test(flag) ? Number(flag) : -1;
      if (code < 0) throw this.refused('flag', `"${flag}" is not a flag (0 to 9)`);
      if (code > MISSING_FLAG) {
        this.skipPoints(SKIPPED.otherFlag(code), 1);
        return -1;
      }
    }
    if (code === MISSING_FLAG) {
      this.skipPoints(SKIPPED.flaggedMissing, 1);
      return -1;
    }
    return code >= FIRST_UNRELIABLE_FLAG ? REJECTED : PROVISIONAL;
  }

  private skipPoints(reason: string, count: number): void {
    this.skipped.set(reason, (this.skipped.get(reason) ?? 0) + count);
  }

  private nothingToImport(): string {
    if (this.seriesIndex === 0) return 'the file holds no series';
    if (this.refusedSeries.length > 0) {
      const more = this.refusedSeriesCount - this.refusedSeries.length;
      return `no series in metres (m, mNAP): ${this.refusedSeries.join('; ')}${more > 0 ? ` and ${more} more` : ''}`;
    }
    return `no series of the parameters selected (${this.options.parameters?.join(', ')})`;
  }

  private place() {
    const path = this.open.map((name, depth) =>
      depth === 1 && name === 'series'
        ? `series[${this.seriesIndex}]`
        : depth === 2 && name === 'event'
          ? `event[${this.eventIndex}]`
          : name,
    );
    return { line: this.lines, path: path.length > 0 ? path.join('/') : undefined };
  }

  private refused(field: string, reason: string): FileRefused {
    return new FileRefused(this.place(), field, reason);
  }
}

export const readFews: ReaderFactory = (_file, sink, options) => new FewsReader(sink, options);
