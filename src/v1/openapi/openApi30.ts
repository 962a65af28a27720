/**
 * The OpenAPI 3.0 rendering of the 3.1 document, for the OGC API - Features `service-desc` (whose
 * `oas30` conformance class asks for 3.0). Derived, never written by hand: each JSON Schema keyword of
 * 3.1 our parts use is rewritten to its 3.0 form, and a keyword 3.0 lacks that has no rewrite here is
 * an error when the document is built, not a document a 3.0 parser refuses.
 */
import type { JsonSchema } from '../../domain/jsonSchema.js';

export const OPENAPI_30_VERSION = '3.0.3';

/** The keywords of a 3.0 Schema Object (its JSON Schema subset and its own), `x-` extensions aside. */
const SCHEMA_30_KEYWORDS = new Set([
  ...['$ref', 'title', 'description', 'type', 'format', 'enum', 'default', 'example', 'nullable'],
  ...['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'],
  ...['maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems'],
  ...['maxProperties', 'minProperties', 'required', 'properties', 'additionalProperties', 'items'],
  ...['allOf', 'oneOf', 'anyOf', 'not', 'discriminator', 'readOnly', 'writeOnly', 'xml'],
  ...['externalDocs', 'deprecated'],
]);

/** The null schema of 3.1: in 3.0, `nullable` on the other branch. */
const isNull = (schema: JsonSchema) => schema.type === 'null' && Object.keys(schema).length === 1;

/** 3.0's schema of null alone: any type made nullable, its values narrowed to null. */
const NULL_30: JsonSchema = { type: 'object', nullable: true, enum: [null] };

const mapValues = (object: object, f: (value: JsonSchema, key: string) => JsonSchema) =>
  Object.fromEntries(Object.entries(object).map(([key, value]) => [key, f(value, key)]));

/** One Schema Object (and every schema in it) in 3.0's form; `at` names where, for the error. */
export function schema30(schema: JsonSchema, at: string): JsonSchema {
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    const where = `${at}/${keyword}`;
    switch (keyword) {
      case 'properties':
        out.properties = mapValues(value as object, (property, name) =>
          schema30(property, `${where}/${name}`),
        );
        break;
      case 'items':
      case 'additionalProperties':
      case 'not':
        out[keyword] = typeof value === 'object' ? schema30(value as JsonSchema, where) : value;
        break;
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        out[keyword] = (value as JsonSchema[]).map((branch, i) => schema30(branch, `${where}/${i}`));
        break;
      case 'type': {
        if (!Array.isArray(value)) {
          out.type = value;
          break;
        }
        const types = value.filter((type) => type !== 'null');
        if (types.length !== 1) throw new Error(`${where}: no 3.0 form of type ${JSON.stringify(value)}`);
        out.type = types[0];
        if (types.length < value.length) out.nullable = true;
        break;
      }
      case 'const':
        out.enum = [value];
        break;
      case 'examples':
        // 3.0 has one example per schema: the first.
        out.example = (value as unknown[])[0];
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (typeof value === 'number') {
          // 3.0's flag turns the bound beside it exclusive.
          out[keyword === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
          out[keyword] = true;
        } else out[keyword] = value;
        break;
      case 'contentMediaType':
        // 3.0 names raw bytes by format; the media type is the content's key already.
        out.format = 'binary';
        break;
      case 'propertyNames':
        // JSON's property names are strings: only a constraint beyond that would be lost.
        if (JSON.stringify(value) !== '{"type":"string"}') throw new Error(`${where}: no 3.0 form`);
        break;
      default:
        if (!SCHEMA_30_KEYWORDS.has(keyword) && !keyword.startsWith('x-')) {
          throw new Error(`${where}: OpenAPI 3.0 has no ${keyword}`);
        }
        out[keyword] = value;
    }
  }
  return withoutNullBranch(withoutRefSiblings(out));
}

/**
 * `anyOf`/`oneOf` with a null branch: of one inline schema and null, that schema `nullable`; else
 * (a reference, which takes no `nullable`, or several) the null branch in 3.0's form.
 */
function withoutNullBranch(schema: JsonSchema): JsonSchema {
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const branches = schema[keyword] as JsonSchema[] | undefined;
    if (branches === undefined || !branches.some(isNull)) continue;
    const others = branches.filter((branch) => !isNull(branch));
    const { [keyword]: _union, ...rest } = schema;
    const [other] = others;
    if (others.length === 1 && other!.$ref === undefined) return { ...other, ...rest, nullable: true };
    return { ...rest, [keyword]: [...others, NULL_30] };
  }
  return schema;
}

/** A `$ref` beside other keywords (3.0 ignores them): the reference in an allOf of one. */
function withoutRefSiblings(schema: JsonSchema): JsonSchema {
  const { $ref, ...siblings } = schema;
  return $ref === undefined || Object.keys(siblings).length === 0
    ? schema
    : { ...siblings, allOf: [{ $ref }] };
}

/**
 * Every Schema Object of an OpenAPI object (components.schemas' values, and each `schema` of a
 * parameter, header or media type) in 3.0's form. Examples are values, not schemas: left as they are.
 */
function withSchemas30(node: unknown, at: string): unknown {
  if (Array.isArray(node)) return node.map((item, i) => withSchemas30(item, `${at}/${i}`));
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      const where = `${at}/${key}`;
      if (key === 'example' || key === 'examples') return [key, value];
      if (key === 'schema') return [key, schema30(value as JsonSchema, where)];
      if (where === '#/components/schemas') {
        return [key, mapValues(value as object, (schema, name) => schema30(schema, `${where}/${name}`))];
      }
      return [key, withSchemas30(value, where)];
    }),
  );
}

interface Document31 {
  openapi: string;
  info: { license?: { name: string; identifier?: string; url?: string } } & Record<string, unknown>;
  [field: string]: unknown;
}

/** The 3.0.3 rendering of `document`, an OpenAPI 3.1 document (JSON). */
export function openApi30(document: Document31): Document31 {
  for (const field of ['webhooks', 'jsonSchemaDialect'] as const) {
    if (field in document) throw new Error(`#/${field}: OpenAPI 3.0 has no ${field}`);
  }
  if ('summary' in document.info) throw new Error('#/info/summary: OpenAPI 3.0 has no summary');
  const { license, ...info } = document.info;
  const converted = withSchemas30({ ...document, openapi: OPENAPI_30_VERSION }, '#') as Document31;
  if (license === undefined) return { ...converted, info };
  // 3.0's license has a URL where 3.1's has an SPDX identifier: SPDX's page of it.
  const { identifier, ...named } = license;
  return {
    ...converted,
    info: {
      ...info,
      license:
        identifier === undefined ? named : { ...named, url: `https://spdx.org/licenses/${identifier}.html` },
    },
  };
}
