/**
 * The two things derived from a zod schema besides validation: its JSON Schema (for the OpenAPI
 * document) and a fast-json-stringify serializer compiled from that same JSON Schema.
 */
import fastJson from 'fast-json-stringify';
import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * The JSON Schema of `schema` without its `$schema` line (inside an OpenAPI 3.1 document the dialect
 * is the document's). `io: 'input'` describes what a client sends (before transforms).
 */
export function jsonSchemaOf(
  schema: z.ZodType,
  options: { io?: 'input' | 'output'; target?: 'draft-2020-12' | 'draft-7' } = {},
): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io: options.io ?? 'output',
    target: options.target ?? 'draft-2020-12',
  });
  return rest;
}

/**
 * A serializer generated once, at startup, from the schema. It writes only the properties the schema
 * names (an extra property on a row can never leak into a response) and skips JSON.stringify's
 * generic walk over each value.
 *
 * Numbers are written by asNumber below instead of fast-json-stringify's own, through the library's
 * debug mode: it hands out the generated code with the helper object that code takes its helpers from,
 * and `restore` builds the function from the two.
 */
export function compileSerializer<S extends z.ZodType>(
  schema: S,
): (value: Serializable<z.output<S>>) => string {
  // fast-json-stringify understands draft 7; for these plain shapes the two drafts say the same.
  const jsonSchema = jsonSchemaOf(schema, { target: 'draft-7' }) as unknown as fastJson.AnySchema;
  const compiled = fastJson(jsonSchema, { mode: 'debug' }) as unknown as DebugCompiled;
  const helpers = Object.create(compiled.serializer, { asNumber: { value: asNumber } });
  return restore({ ...compiled, serializer: helpers });
}

/** What a serializer takes: the schema's output, where a number may also come as its JSON text. */
export type Serializable<T> = T extends number
  ? number | string
  : T extends object
    ? { [K in keyof T]: Serializable<T[K]> }
    : T;

/** What `mode: 'debug'` returns and `restore` takes (the package's types describe neither). */
interface DebugCompiled {
  code: string;
  validator: unknown;
  serializer: object;
}
const restore = fastJson.restore as unknown as (compiled: DebugCompiled) => (value: unknown) => string;

/**
 * A decimal in JSON's grammar without an exponent, written as it is; not `-0`, which JavaScript writes
 * as `0`.
 */
const PLAIN_JSON_DECIMAL = /^(?:0|-?[1-9]\d*(?:\.\d+)?|-?0\.\d+)$/;

/**
 * A JSON number, as fast-json-stringify's asNumber writes it (a numeric string is read as a number,
 * NaN is an error, ±Infinity is null), with two differences:
 *
 * - A plain decimal given as text is written as it is. The series reads PostgreSQL's text of each
 *   double, which for 1e-4 ≤ |x| < 1e15 is plain and has the digits JavaScript would write (both
 *   print the shortest text that reads back as the same double), so parsing it only to print it again
 *   would be wasted (docs/decisions/0015-young-generation.md). Outside that range PostgreSQL writes an
 *   exponent (`1e-07`), which is printed again below, so the output is JavaScript's in every case.
 * - A number is printed with JSON.stringify, not `'' + number`. Both give the same digits (ECMA-262's
 *   Number::toString), but for a non-integer V8 puts `'' + number`'s result in its number-to-string
 *   cache and so allocates it straight in the old generation, where only a full collection frees it
 *   (test/http/jsonSchema.test.ts).
 *
 * The CSV of a series writes its numbers with this too, so that they read as in the JSON.
 */
export function asNumber(value: unknown): string {
  if (typeof value === 'string' && PLAIN_JSON_DECIMAL.test(value)) return value;
  const number = Number(value);
  if (Number.isNaN(number)) throw new Error(`The value "${String(value)}" cannot be converted to a number.`);
  return JSON.stringify(number);
}
