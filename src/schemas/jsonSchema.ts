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
 */
export function compileSerializer<S extends z.ZodType>(schema: S): (value: z.output<S>) => string {
  // fast-json-stringify understands draft 7; for these plain shapes the two drafts say the same.
  const jsonSchema = jsonSchemaOf(schema, { target: 'draft-7' }) as unknown as fastJson.AnySchema;
  return fastJson(jsonSchema);
}
