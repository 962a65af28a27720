/** What the tests expect of the OpenAPI document's operations. */

/** The query of an interval of measurements: name, place, required. */
export const INTERVAL_QUERY = [
  ['from', 'query', true],
  ['to', 'query', true],
  ['aggregate', 'query', false],
  ['format', 'query', false],
  ['status', 'query', false],
  ['include', 'query', false],
];

/** The request headers of a conditional GET: name, place, required. */
export const CONDITIONAL = [
  ['If-None-Match', 'header', false],
  ['If-Modified-Since', 'header', false],
];

/** An operation's parameters: name, place, and whether required. */
export const parameterList = (operation: {
  parameters: { name: string; in: string; required?: boolean }[];
}) => operation.parameters.map((p) => [p.name, p.in, p.required ?? false]);
