/**
 * Times and numbers of measurements as text, written from the numbers of a MeasurementBatch: the JSON
 * and the CSV of a series write every instant and value with these, byte for byte what they wrote
 * when PostgreSQL printed them.
 */
import { formatInstant } from '../../domain/datetime.js';
import type { RecycledChunks } from './recycledChunks.js';

const MICROS_PER_SECOND = 1_000_000;
const MICROS_PER_MINUTE = 60 * MICROS_PER_SECOND;
const MICROS_PER_DAY = 1440 * MICROS_PER_MINUTE;

/**
 * RFC 3339 in UTC of microseconds since 1970 (an integer, |µs| < 2^53): `2024-01-01T00:00:00.5Z`, the
 * fraction only when not zero, as formatInstant writes it. For examples and tests; the writers of a
 * series write bytes (AsciiWriter).
 */
export function instantText(micros: number): string {
  textWriter.reserve(27);
  textWriter.instant(micros);
  return textWriter.take().toString('latin1');
}

/**
 * A double as a JSON number: the shortest text that reads back as the same double (ECMA-262's
 * Number::toString), `-0` as `0`; ±Infinity as `null` and NaN an error, as fast-json-stringify does.
 * JSON.stringify rather than `'' + number`: V8 keeps the latter's result in its number-to-string cache,
 * which puts it straight in the old generation (test/http/jsonSchema.test.ts).
 */
export function numberText(value: number): string {
  if (Number.isNaN(value)) throw new Error('NaN cannot be written as a JSON number');
  return JSON.stringify(value);
}

const DIGIT_0 = 48;
/** Pieces up to this many bytes are copied byte by byte (AsciiWriter.bytes). */
const SHORT_PIECE = 16;
/** Doubles whose shortest text the writer finds from their 6-decimal integer: below 10^15 of those. */
const SCALE = 1_000_000;
const MOST_SCALED = 999_999_999_999_999;

/**
 * ASCII text written straight into a reused scratch buffer, then copied out once per batch: the JSON
 * and CSV of a batch without a string per value (docs/decisions/0014-text-from-numbers.md). What it
 * writes is exactly instantText's and numberText's text (test/engine/measurementText.test.ts).
 */
export class AsciiWriter {
  private scratch: Buffer;
  private at = 0;
  /** `YYYY-MM-DDT` of the last day written, as bytes. */
  private day = Number.NaN;
  private readonly dayBytes = Buffer.alloc(11);

  /** `initialBytes`: the scratch's first size (it grows as needed). */
  constructor(initialBytes = 1 << 16) {
    this.scratch = Buffer.allocUnsafe(initialBytes);
  }

  /** Room for `bytes` more: the scratch grows (doubling) when a batch needs more. */
  reserve(bytes: number): void {
    if (this.at + bytes <= this.scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.scratch.length, this.at + bytes));
    this.scratch.copy(grown, 0, 0, this.at);
    this.scratch = grown;
  }

  /**
   * The bytes written since the last take, in a Buffer of their own: copied out of the scratch, which is
   * reused; or, with `chunks`, in the scratch itself, which memory of `chunks` then replaces (no copy).
   */
  take(chunks?: RecycledChunks): Buffer {
    if (chunks && this.at > 0) {
      const taken = this.scratch.subarray(0, this.at);
      // As much as this take's: the next batch's bytes are about as many.
      this.scratch = chunks.room(this.at);
      this.at = 0;
      return taken;
    }
    const taken = Buffer.allocUnsafe(this.at);
    this.scratch.copy(taken, 0, 0, this.at);
    this.at = 0;
    return taken;
  }

  /**
   * Bytes (a constant piece of the format); the caller reserved room. A long piece (a tube's columns
   * on every line of a CSV of many tubes) is copied by TypedArray.set, a short one byte by byte, which
   * is faster than a call for a few bytes (docs/decisions/0004-network-writers.md).
   */
  bytes(bytes: Buffer): void {
    const scratch = this.scratch;
    let at = this.at;
    if (bytes.length > SHORT_PIECE) {
      scratch.set(bytes, at);
      this.at = at + bytes.length;
      return;
    }
    for (let i = 0; i < bytes.length; i++) scratch[at++] = bytes[i]!;
    this.at = at;
  }

  /** Where the next byte goes, counted from the last take (for `again`). */
  get written(): number {
    return this.at;
  }

  /** The bytes from `start` to `end` (positions of `written` since the last take) once more. */
  again(start: number, end: number): void {
    const scratch = this.scratch;
    let at = this.at;
    for (let i = start; i < end; i++) scratch[at++] = scratch[i]!;
    this.at = at;
  }

  /** Text of any characters (the caller reserved room for its UTF-8). */
  text(text: string): void {
    this.at += this.scratch.write(text, this.at, 'utf8');
  }

  private twoDigits(n: number): void {
    const tens = Math.floor(n / 10);
    this.scratch[this.at++] = DIGIT_0 + tens;
    this.scratch[this.at++] = DIGIT_0 + n - 10 * tens;
  }

  /** instantText(micros), at most 27 bytes. */
  instant(micros: number): void {
    let day = Math.floor(micros / MICROS_PER_DAY);
    let ofDay = micros - day * MICROS_PER_DAY;
    if (ofDay < 0) {
      day -= 1;
      ofDay += MICROS_PER_DAY;
    } else if (ofDay >= MICROS_PER_DAY) {
      day += 1;
      ofDay -= MICROS_PER_DAY;
    }
    if (day !== this.day) {
      this.dayBytes.write(formatInstant({ seconds: day * 86_400, micros: 0 }).slice(0, 11), 0, 'latin1');
      this.day = day;
    }
    this.bytes(this.dayBytes);
    const minuteOfDay = Math.floor(ofDay / MICROS_PER_MINUTE);
    const ofMinute = ofDay - minuteOfDay * MICROS_PER_MINUTE;
    const second = Math.floor(ofMinute / MICROS_PER_SECOND);
    const fraction = ofMinute - second * MICROS_PER_SECOND;
    const hour = Math.floor(minuteOfDay / 60);
    const scratch = this.scratch;
    this.twoDigits(hour);
    scratch[this.at++] = 0x3a; // :
    this.twoDigits(minuteOfDay - 60 * hour);
    scratch[this.at++] = 0x3a;
    this.twoDigits(second);
    if (fraction !== 0) this.fraction(fraction);
    scratch[this.at++] = 0x5a; // Z
  }

  /** `.` and the 6 digits of millionths 1 to 999,999, without trailing zeros. */
  private fraction(millionths: number): void {
    let rest = millionths;
    let digits = 6;
    while (rest % 10 === 0) {
      rest /= 10;
      digits--;
    }
    const scratch = this.scratch;
    scratch[this.at++] = 0x2e; // .
    for (let i = digits - 1; i >= 0; i--) {
      const tens = Math.floor(rest / 10);
      scratch[this.at + i] = DIGIT_0 + rest - 10 * tens;
      rest = tens;
    }
    this.at += digits;
  }

  /** A non-negative integer below 2^53 in decimal. */
  private integer(value: number): void {
    let digits = 1;
    for (let bound = 10; bound <= value; bound *= 10) digits++;
    const scratch = this.scratch;
    for (let i = digits - 1; i >= 0; i--) {
      const rest = Math.floor(value / 10);
      scratch[this.at + i] = DIGIT_0 + value - 10 * rest;
      value = rest;
    }
    this.at += digits;
  }

  /**
   * numberText(value), at most 25 bytes. A double that is the nearest to a decimal of at most 6
   * fraction digits and 15 significant ones is that decimal's shortest text (no other decimal of up to
   * 15 digits reads back as the same double), written from its integer of millionths; any other goes
   * through numberText.
   */
  number(value: number): void {
    const scaled = Math.round(value * SCALE);
    if (scaled / SCALE !== value || scaled > MOST_SCALED || scaled < -MOST_SCALED) {
      this.text(numberText(value));
      return;
    }
    // -0 is written as 0, as JavaScript does.
    let magnitude = scaled;
    if (scaled < 0) {
      this.scratch[this.at++] = 0x2d; // -
      magnitude = -scaled;
    }
    const whole = Math.floor(magnitude / SCALE);
    const fraction = magnitude - whole * SCALE;
    this.integer(whole);
    if (fraction !== 0) this.fraction(fraction);
  }
}

/** instantText's own writer. */
const textWriter = new AsciiWriter(32);
