/**
 * BRO GLD XML: a level dossier's dispatch (`dsgld`, `GLD_O`) or a registration request adding
 * observations to one (`isgld`, `GLD_Addition`). Each `om:OM_Observation` states its review level
 * (`waterml:status`), kind (`observationType`) and `resultTime` before its points
 * (`waterml:MeasurementTVP`: time, value in metres relative to NAP, `StatusQualityControl`), so every
 * point is passed on as it is read.
 */
import type { SaxesTagPlain } from 'saxes';
import { readDateTime, readInstant } from '../../../domain/datetime.js';
import { ElementRuns, lineBreaks } from '../elementRuns.js';
import { broTube } from '../identity.js';
import type { FormatOptions, LevelSink, ReaderFactory } from '../reader.js';
import { attribute, BroXmlReader, decimalValue, isNil } from './broXml.js';
import { broStatus, CONTROL_READING, MISSING_VALUE, reviewPriority } from './status.js';

/**
 * A point as BRO writes nearly all of them, with a value in metres and its StatusQualityControl: 1 the
 * prefix of WaterML, 2 the time, 3 the value, 4 the prefix of SWE, 5 the quality. Only elements and
 * text that cannot hold markup, so a match is well-formed XML; anything else (`xsi:nil`, a censoring
 * limit, comments, entities, another unit, a character XML refuses or normalizes) is left to saxes.
 */
const TEXT = "[\\t\\n -%'-;=-\\\\^-\\ufffd]";
const ATTRIBUTE_VALUE = "[ !#-%'-;=-\\ufffd]";
const POINT = new RegExp(
  [
    `<([\\w.-]+:)?point>\\s*<\\1MeasurementTVP>\\s*<\\1time>(${TEXT}*)</\\1time>\\s*`,
    `<\\1value(?: uom="m")?>(${TEXT}+)</\\1value>\\s*<\\1metadata>\\s*<\\1TVPMeasurementMetadata>\\s*`,
    '<\\1qualifier>\\s*<([\\w.-]+:)?Category>\\s*',
    `<\\4codeSpace [\\w.-]+:href="urn:bro:gld:StatusQualityControl"/>\\s*<\\4value>(${TEXT}*)</\\4value>\\s*`,
    `</\\4Category>\\s*</\\1qualifier>\\s*(?:<\\1interpolationType [\\w.-]+:href="${ATTRIBUTE_VALUE}*"/>\\s*)?`,
    '</\\1TVPMeasurementMetadata>\\s*</\\1metadata>\\s*</\\1MeasurementTVP>\\s*</\\1point>',
  ].join(''),
  'g',
);

/** Seconds from 0001-01-01 to 1970-01-01, so that every resultTime ranks as a positive number. */
const EPOCH_FROM_YEAR_ONE = 62_135_596_800;
/** Above any resultTime so ranked (9999-12-31 is 3.2e11 s from year 1). */
const REVIEW_STEP = 1e12;

class GldXmlReader extends BroXmlReader {
  /** The tube of the levels: `--tube`, or the one the dossier names. */
  private tube: string | undefined;
  private wellBroId = '';
  private tubeNumber = '';
  // The observation being read.
  private review: string | undefined;
  private observationType = '';
  private namedValue = '';
  private resultTime = 0;
  private priority = 0;
  private control = false;
  // The point being read.
  private pointLine = 0;
  private readonly instant = { seconds: 0, micros: 0 };
  private hasTime = false;
  /** Its value; NaN while it has none (none written, `xsi:nil`, or empty). */
  private value = Number.NaN;
  private valueNil = false;
  private qualitySpace = '';
  private quality = '';

  constructor(
    private readonly sink: LevelSink,
    private readonly options: FormatOptions,
  ) {
    super({ object: 'GLD', command: 'bro-gld', dispatched: ['GLD_O'], registered: ['GLD_Addition'] });
    this.tube = options.tube?.toLowerCase();
    this.runs = new ElementRuns(
      POINT,
      (text) => this.parse(text),
      (match) => this.readPoint(match),
    );
  }

  /**
   * A point POINT matched where saxes stands between two elements, read and passed on; false (nothing
   * done) when saxes is to read it: outside a MeasurementTimeseries, or a wrong time or value, which saxes
   * refuses with its element path.
   */
  private readPoint(match: RegExpExecArray): boolean {
    if (this.parent(0) !== 'MeasurementTimeseries') return false;
    const time = match[2]!.trim();
    if (readDateTime(time, 0, time.length) !== undefined) return false;
    const value = decimalValue(match[3]!.trim());
    if (Number.isNaN(value)) return false;
    const point = match[0];
    this.pointLine = this.lines + lineBreaks(point, point.indexOf('MeasurementTVP>'));
    this.instant.seconds = readInstant.seconds;
    this.instant.micros = readInstant.micros;
    this.hasTime = true;
    this.value = value;
    this.quality = match[5]!.trim();
    this.point();
    return true;
  }

  protected open(tag: SaxesTagPlain, local: string): void {
    switch (local) {
      case 'MeasurementTVP':
        this.pointLine = this.lines;
        this.hasTime = false;
        this.value = Number.NaN;
        this.quality = '';
        return;
      case 'value':
        if (this.parent() === 'MeasurementTVP') {
          this.valueNil = isNil(tag);
          const unit = attribute(tag, 'uom');
          if (unit !== undefined && unit !== 'm') {
            this.refuse(
              this.name,
              `unit ${JSON.stringify(unit)} is not read: levels are read in metres relative to NAP ("m")`,
            );
          }
        }
        return;
      case 'codeSpace':
        if (this.parent() === 'Category') this.qualitySpace = attribute(tag, 'href') ?? '';
        return;
      case 'OM_Observation':
        this.review = undefined;
        this.observationType = '';
        this.resultTime = 0;
        return;
      case 'status':
        if (this.parent() === 'ObservationMetadata') {
          const href = attribute(tag, 'href') ?? '';
          this.review = href.slice(href.lastIndexOf(':') + 1);
        }
        return;
      case 'name':
        if (this.parent() === 'NamedValue') this.namedValue = attribute(tag, 'href') ?? '';
        return;
      case 'MeasurementTimeseries':
        this.startResult();
        return;
      case 'GLD_O':
      case 'GLD_Addition':
        this.tube = this.options.tube?.toLowerCase();
        return;
    }
  }

  protected close(_tag: SaxesTagPlain, local: string): void {
    switch (local) {
      case 'time':
        if (this.parent() === 'MeasurementTVP') this.readTime();
        return;
      case 'value':
        if (this.parent() === 'MeasurementTVP') {
          const text = this.text.trim();
          if (!this.valueNil && text !== '') this.value = this.decimal(text);
        } else if (this.parent() === 'Category') {
          if (this.qualitySpace === 'urn:bro:gld:StatusQualityControl') this.quality = this.text.trim();
        } else if (
          this.parent() === 'NamedValue' &&
          this.namedValue === 'urn:bro:gld:ObservationMetadata:observationType'
        ) {
          this.observationType = this.text.trim();
        }
        return;
      case 'MeasurementTVP':
        this.point();
        return;
      case 'timePosition':
        if (this.parent(2) === 'resultTime') {
          const text = this.text.trim();
          const problem = readDateTime(text, 0, text.length);
          if (problem !== undefined) this.refuse(this.name, `${JSON.stringify(text)} ${problem}`);
          this.resultTime = readInstant.seconds + EPOCH_FROM_YEAR_ONE;
        }
        return;
      case 'broId':
        if (this.parent() === 'GroundwaterMonitoringTube') this.wellBroId = this.text.trim();
        return;
      case 'tubeNumber':
        if (this.parent() === 'GroundwaterMonitoringTube') this.tubeNumber = this.text.trim();
        return;
      case 'GroundwaterMonitoringTube':
        this.namedTube();
        return;
    }
  }

  /** The dossier's `monitoringPoint`: its levels' tube, which `--tube` may not contradict. */
  private namedTube(): void {
    if (this.wellBroId === '' || this.tubeNumber === '') {
      this.refuse(this.name, 'names no tube: a GroundwaterMonitoringTube needs its broId and tubeNumber');
    }
    const named = broTube(this.wellBroId, this.tubeNumber);
    const given = this.options.tube?.toLowerCase();
    if (given !== undefined && given !== named) {
      this.refuse(
        this.name,
        `names tube ${this.tubeNumber} of ${this.wellBroId} (${named}), not the --tube given (${given})`,
      );
    }
    this.tube = named;
  }

  /** The observation's points start: what they are, and how they rank against others of the same time. */
  private startResult(): void {
    if (this.tube === undefined) {
      this.refuse(
        this.name,
        'the file names no tube (a GLD_Addition does not): give the tube with --tube, ' +
          'the identifier `gwapi import bro-gmw` gave it',
      );
    }
    this.control = this.observationType === 'controlemeting';
    this.priority = reviewPriority(this.review ?? '') * REVIEW_STEP + this.resultTime;
  }

  private readTime(): void {
    const text = this.text.trim();
    const problem = readDateTime(text, 0, text.length);
    if (problem !== undefined) this.refuse(this.name, `${JSON.stringify(text)} ${problem}`);
    this.instant.seconds = readInstant.seconds;
    this.instant.micros = readInstant.micros;
    this.hasTime = true;
  }

  private point(): void {
    if (!this.hasTime) this.refuse(this.name, 'has no time');
    if (Number.isNaN(this.value)) {
      this.sink.skipPoints(MISSING_VALUE);
      return;
    }
    if (this.control) {
      this.sink.skipPoints(CONTROL_READING);
      return;
    }
    this.sink.level(
      this.pointLine,
      this.tube!,
      this.instant,
      this.value,
      broStatus(this.quality, this.review ?? ''),
      this.priority,
    );
  }
}

/** `gwapi import bro-gld` of an XML file. */
export const gldXmlReader: ReaderFactory = (_file, sink, options) => new GldXmlReader(sink, options);
