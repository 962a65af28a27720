/**
 * "Nothing of 1.0.0 changes" (shared/spec/v1.1.md, first paragraph): a client that sends what a 1.0.0
 * client sends gets what it got before, byte for byte, except for the headers 1.1 adds (ETag,
 * Last-Modified and Cache-Control on a 200 of discovery or series; `Accept` in their Vary) and the
 * API-Version value. A fixed dataset, fixed keys and a list of 1.0.0 requests go over bare sockets;
 * every response (status line, header fields, decoded body) is compared with compatibility.v1.0.0.json.
 *
 * That golden file was recorded from commit fd1b075, the last 1.0.0 code, by this very file:
 *   git worktree add /tmp/gwapi-1.0.0 fd1b075 && cd /tmp/gwapi-1.0.0 && npm ci
 *   cp …/test/v1/compatibility.test.ts test/v1/ && UPDATE_GOLDEN=1 npm test -- test/v1/compatibility.test.ts
 * and test/v1/compatibility.v1.0.0.json copied back. Only UPDATE_GOLDEN=1 writes it, and only on that
 * commit. It must never be recorded from newer code, or it would prove nothing: a request added to the
 * list is recorded again from fd1b075 (the helpers used here are the same there).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { generateApiKey } from '../../src/keys/format.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { API_VERSION } from '../../src/v1/contract.js';
import { startApi } from '../helpers/api.js';
import { addKey, addMeasurements, addRegularSeries, addWell, revokeKey } from '../helpers/fixtures.js';
import { recordingLogger, settingsWith } from '../helpers/limits.js';
import { exchange, type RawResponse } from '../helpers/rawHttp.js';
import { rememberKey } from '../helpers/secrets.js';

const GOLDEN = new URL('./compatibility.v1.0.0.json', import.meta.url);
const RECORDING = process.env.UPDATE_GOLDEN === '1';
/** fd1b075: the last commit before any 1.1 work. */
const RECORDED_FROM = 'fd1b07589cf71b84a2c7689975b1508c60df5003';

/** Values that differ on every response by nature (the clock, the request's own id): compared as present. */
const VOLATILE_FIELDS = new Set(['date', 'x-request-id']);
const MASKED = '…';
/** RateLimit's `t`, the seconds until the next token, counts down with the clock; `r` stays exact. */
const COUNTDOWN = /;t=\d+/;
/** A burst no request list spends and a refill too slow to show within a run: `r` is exact. */
const LIMITS = { RATE_LIMIT_BURST: '1000', RATE_LIMIT_PER_SECOND: '0.001' };
/** What 1.1 adds to a 200 of discovery or series (conditional requests). */
const VALIDATOR_FIELDS = new Set(['etag', 'last-modified', 'cache-control']);
/** The token 1.1 adds to Vary of discovery and series (CSV negotiation). */
const VARY_ADDED = 'accept';
/** Bodies longer than this are kept once each, by hash, at the end of the golden file. */
const INLINE_BODY_CHARS = 2000;
/** Characters shown either side of the first difference of two bodies. */
const DIFF_CONTEXT = 120;

const WELLS = '/v1/groundwater-monitoring-wells';
const tube = (identifier: string) => `/v1/groundwater-monitoring-tubes/${identifier}`;
const series = (identifier: string, query: string) => `${tube(identifier)}/measurements?${query}`;

/** Fixed identifiers: they are part of every recorded body. */
const ALPHA_1 = '0b7f6e1c-2f4a-4c3e-9d51-1a2b3c4d5e01';
const ALPHA_2 = '0b7f6e1c-2f4a-4c3e-9d51-1a2b3c4d5e02';
const ALPHA_10 = '0b7f6e1c-2f4a-4c3e-9d51-1a2b3c4d5e10';
const BETA_1 = '5c9d8a7b-6e5f-4a3b-8c2d-0e1f2a3b4c01';
const HIDDEN_1 = 'f00dfeed-1234-4abc-8def-0123456789ab';
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

const DAY_ONE = 'from=2024-03-01T00:00:00Z&to=2024-03-02T00:00:00Z';
const TWO_DAYS = 'from=2024-06-01T00:00:00Z&to=2024-06-03T00:00:00Z';

type KeyName = 'reader' | 'all' | 'nothing' | 'revoked' | 'unknown';

interface CompatRequest {
  method: string;
  path: string;
  key?: KeyName;
  headers?: Record<string, string>;
}

/** What a 1.0.0 client sends; every parameter and header here existed in 1.0.0. */
const REQUESTS: CompatRequest[] = [
  // Discovery.
  { method: 'GET', path: WELLS, key: 'reader' },
  { method: 'GET', path: WELLS, key: 'all' },
  { method: 'HEAD', path: WELLS, key: 'reader' },
  { method: 'GET', path: WELLS, key: 'reader', headers: { 'accept-encoding': 'gzip' } },
  { method: 'GET', path: WELLS, key: 'all', headers: { 'accept-encoding': 'br' } },
  { method: 'GET', path: WELLS, key: 'reader', headers: { 'accept-encoding': 'identity' } },
  { method: 'GET', path: WELLS, key: 'reader', headers: { accept: 'application/json' } },
  { method: 'GET', path: WELLS, key: 'reader', headers: { accept: '*/*' } },
  { method: 'GET', path: `${WELLS}?unknown=1`, key: 'reader' },
  { method: 'GET', path: `${WELLS}/`, key: 'reader' },
  { method: 'GET', path: WELLS },
  { method: 'GET', path: WELLS, key: 'unknown' },
  { method: 'GET', path: WELLS, key: 'revoked' },
  { method: 'GET', path: WELLS, key: 'nothing' },
  { method: 'HEAD', path: WELLS, key: 'nothing' },
  { method: 'POST', path: WELLS, key: 'reader' },
  { method: 'DELETE', path: WELLS, key: 'reader' },
  // Series: intervals.
  { method: 'GET', path: series(ALPHA_1, DAY_ONE), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, DAY_ONE), key: 'all' },
  { method: 'HEAD', path: series(ALPHA_1, DAY_ONE), key: 'reader' },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01T13:00:00%2B01:00&to=2024-03-01T07:00:01.5-05:00'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01T12:00:00.000001Z&to=2024-03-01T12:00:00.123456Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01T12:00:00.0000011Z&to=2024-03-01T12:00:00.1234561Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01t12:00:00z&to=2024-03-01%2012:00:02Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'to=2024-03-02T00:00:00Z&from=2024-03-01T00:00:00Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=1969-12-31T00:00:00Z&to=1970-01-01T00:00:00.000001Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2030-01-01T00:00:00Z&to=2030-01-02T00:00:00Z'),
    key: 'reader',
  },
  { method: 'GET', path: series(ALPHA_1, `${DAY_ONE}&unknown=1`), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1.toUpperCase(), DAY_ONE), key: 'reader' },
  { method: 'GET', path: series(BETA_1, 'from=2024-01-01T00:00:00Z&to=2024-12-31T00:00:00Z'), key: 'reader' },
  { method: 'GET', path: series(BETA_1, 'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z'), key: 'reader' },
  // Series: a large one, every coding and Accept a 1.0.0 client may send.
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader' },
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { 'accept-encoding': 'gzip' } },
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { 'accept-encoding': 'br' } },
  {
    method: 'GET',
    path: series(ALPHA_10, TWO_DAYS),
    key: 'reader',
    headers: { 'accept-encoding': 'gzip;q=0.5, br;q=0.9' },
  },
  {
    method: 'GET',
    path: series(ALPHA_10, TWO_DAYS),
    key: 'reader',
    headers: { 'accept-encoding': 'identity' },
  },
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { accept: 'application/json' } },
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { accept: '*/*' } },
  { method: 'GET', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { accept: 'application/xml' } },
  { method: 'HEAD', path: series(ALPHA_10, TWO_DAYS), key: 'reader', headers: { 'accept-encoding': 'gzip' } },
  {
    method: 'GET',
    path: series(ALPHA_10, 'from=2024-06-01T10:00:30Z&to=2024-06-01T10:05:00.000001Z'),
    key: 'reader',
  },
  // Series: 400.
  { method: 'GET', path: `${tube(ALPHA_1)}/measurements`, key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, 'from=2024-03-01T00:00:00Z'), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, 'to=2024-03-01T00:00:00Z'), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, 'from=&to='), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, 'from=2024-03-01&to=2024-03-02'), key: 'reader' },
  { method: 'GET', path: series(ALPHA_1, 'from=2024-03-01T00:00:00&to=2024-03-02T00:00:00Z'), key: 'reader' },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-02-30T00:00:00Z&to=2024-03-02T00:00:00Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01T00:00:00+01:00&to=2024-03-02T00:00:00Z'),
    key: 'reader',
  },
  { method: 'GET', path: series(ALPHA_1, `${DAY_ONE}&from=2024-03-01T00:00:00Z`), key: 'reader' },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-01T00:00:00Z&to=2024-03-01T00:00:00Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-03-02T00:00:00Z&to=2024-03-01T00:00:00Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:01Z'),
    key: 'reader',
  },
  {
    method: 'GET',
    path: series(ALPHA_1, 'from=x&to=y'),
    key: 'reader',
    headers: { 'accept-encoding': 'gzip' },
  },
  { method: 'HEAD', path: series(ALPHA_1, 'from=x&to=y'), key: 'reader' },
  // Series: key and access.
  { method: 'GET', path: series(ALPHA_1, DAY_ONE) },
  { method: 'GET', path: series(ALPHA_1, DAY_ONE), key: 'unknown' },
  { method: 'GET', path: series(ALPHA_1, DAY_ONE), key: 'revoked' },
  { method: 'GET', path: series(ALPHA_1, DAY_ONE), key: 'nothing' },
  { method: 'GET', path: series(ALPHA_2, DAY_ONE), key: 'reader' },
  { method: 'GET', path: series(HIDDEN_1, DAY_ONE), key: 'reader' },
  { method: 'GET', path: series(UNKNOWN, DAY_ONE), key: 'reader' },
  { method: 'GET', path: series('not-a-uuid', DAY_ONE), key: 'reader' },
  { method: 'GET', path: series(UNKNOWN, 'from=x'), key: 'reader' },
  { method: 'HEAD', path: series(HIDDEN_1, DAY_ONE), key: 'reader' },
  // Methods and paths.
  { method: 'POST', path: series(ALPHA_1, DAY_ONE), key: 'reader' },
  { method: 'PUT', path: series(ALPHA_1, DAY_ONE), key: 'reader' },
  { method: 'OPTIONS', path: series(ALPHA_1, DAY_ONE), key: 'reader' },
  { method: 'GET', path: `${tube(ALPHA_1)}`, key: 'reader' },
  { method: 'GET', path: '/v1/groundwater-monitoring-tubes', key: 'reader' },
  { method: 'GET', path: '/v1/nothing-here', key: 'reader' },
  { method: 'GET', path: '/v2/groundwater-monitoring-wells', key: 'reader' },
  { method: 'GET', path: '/' },
];

/** The dataset: wells in an order that natural sorting changes, tricky times and values. */
async function seed(sql: Parameters<typeof addWell>[0]) {
  const [alpha1, alpha2, alpha10] = await addWell(sql, 'Alpha 2', [
    { number: '1', identifier: ALPHA_1 },
    { number: '2', identifier: ALPHA_2 },
    { number: '10', identifier: ALPHA_10 },
  ]);
  const [beta1] = await addWell(sql, 'Alpha 10', [
    { number: '1', identifier: BETA_1, unit: 'cm', verticalDatum: 'MSL' },
  ]);
  const [hidden1] = await addWell(sql, 'Hidden', [{ number: '1', identifier: HIDDEN_1 }]);
  await addMeasurements(sql, alpha1!.id, [
    ['1969-12-31T23:59:59.999999Z', '1.5'],
    ['2024-03-01T00:00:00Z', '0'],
    ['2024-03-01T12:00:00.000001Z', '-0.1'],
    ['2024-03-01T12:00:00.123456Z', '1e-7'],
    ['2024-03-01T12:00:01+01:00', '-0'],
    ['2024-03-01T12:00:01.5Z', '0.30000000000000004'],
    ['2024-03-01T12:00:02Z', '123456789.123456'],
    ['2024-03-01T13:00:00Z', '-12345.678'],
    ['2024-03-01T23:59:59.999999Z', '1e21'],
    ['2024-03-02T00:00:00Z', '5e-324'],
  ]);
  await addMeasurements(sql, alpha2!.id, [['2024-03-01T06:00:00Z', '7']]);
  await addMeasurements(sql, beta1!.id, [
    ['2024-02-29T00:00:00Z', '-3.25'],
    ['2024-12-31T00:00:00Z', '1.7976931348623157e308'],
  ]);
  await addMeasurements(sql, hidden1!.id, [['2024-03-01T06:00:00Z', '8']]);
  await addRegularSeries(sql, alpha10!.id, '2024-06-01T00:00:00Z', '2024-06-03T00:00:00Z', '1 minute');
  const reader = await addKey(sql, { tubeIds: [alpha1!.id, alpha10!.id, beta1!.id] });
  const all = await addKey(sql, { allTubes: true });
  const nothing = await addKey(sql);
  const revoked = await addKey(sql, { tubeIds: [alpha1!.id] });
  await revokeKey(sql, revoked.keyId);
  const unknown = generateApiKey();
  rememberKey(unknown);
  const keys: Record<KeyName, string> = {
    reader: reader.key,
    all: all.key,
    nothing: nothing.key,
    revoked: revoked.key,
    unknown,
  };
  return keys;
}

/** The request as the golden file names it: no key value, only which key. */
function describe(request: CompatRequest): string {
  const headers = Object.entries(request.headers ?? {}).map(([name, value]) => ` [${name}: ${value}]`);
  return `${request.method} ${request.path}${request.key ? ` [key: ${request.key}]` : ''}${headers.join('')}`;
}

function requestBytes(request: CompatRequest, keys: Record<KeyName, string>): string {
  const headers = {
    host: 'localhost',
    ...(request.key ? { 'x-api-key': keys[request.key] } : {}),
    ...request.headers,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `${request.method} ${request.path} HTTP/1.1\r\n${lines.join('')}\r\n`;
}

interface Recorded {
  request: string;
  status: number;
  reason: string;
  /** Header fields by name (stable for repeated names: their order is significant, other order is not). */
  fields: [string, string][];
  /** The decoded body, or `sha256:…` naming one of the golden file's long bodies. */
  body: string;
}

interface Golden {
  recordedFrom: string;
  responses: Recorded[];
  longBodies: Record<string, string>;
}

const isDataPath = (path: string) =>
  path.split('?')[0] === WELLS ||
  /^\/v1\/groundwater-monitoring-tubes\/[^/]+\/measurements$/.test(path.split('?')[0]!);

/** What must stay the same: everything but the volatile fields and what 1.1 may add or change. */
function normalise(t: Test, request: CompatRequest, response: RawResponse) {
  const versions = response.fields.filter(([name]) => name === 'api-version').map(([, value]) => value);
  t.same(versions, [API_VERSION], `${describe(request)}: one API-Version, the served one`);
  const dataPath = isDataPath(request.path);
  const validatorsAllowed = dataPath && response.status === 200;
  const fields: [string, string][] = [];
  for (const [name, value] of response.fields) {
    if (name === 'api-version') continue;
    if (VOLATILE_FIELDS.has(name)) {
      fields.push([name, MASKED]);
      continue;
    }
    if (validatorsAllowed && VALIDATOR_FIELDS.has(name)) continue;
    if (name === 'vary' && dataPath) {
      const kept = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token.toLowerCase() !== VARY_ADDED);
      if (kept.length > 0) fields.push([name, kept.join(', ')]);
      continue;
    }
    fields.push([name, name === 'ratelimit' ? value.replace(COUNTDOWN, `;t=${MASKED}`) : value]);
  }
  fields.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return { status: response.status, reason: response.reason, fields, body: response.body.toString('utf8') };
}

const bodyRef = (body: string) => `sha256:${createHash('sha256').update(body).digest('hex')}`;

/** Where two texts first differ. */
function firstDifference(a: string, b: string): number {
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  return at;
}

const excerpt = (text: string, at: number) => text.slice(Math.max(0, at - DIFF_CONTEXT), at + DIFF_CONTEXT);

t.test('a 1.0.0 client gets what it got from 1.0.0', async (t) => {
  const limits = await createClientLimits(settingsWith(LIMITS), { logger: recordingLogger() });
  const api = await startApi(t, { limits, env: LIMITS });
  const keys = await seed(api.db.sql);

  const responses: Recorded[] = [];
  for (const request of REQUESTS) {
    const response = await exchange(api.port, requestBytes(request, keys), {
      head: request.method === 'HEAD',
    });
    responses.push({ request: describe(request), ...normalise(t, request, response) });
  }

  if (RECORDING) {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
    if (commit !== RECORDED_FROM) throw new Error(`the golden file is recorded from ${RECORDED_FROM} only`);
    const longBodies: Record<string, string> = {};
    const golden: Golden = {
      recordedFrom: commit,
      responses: responses.map((recorded) => {
        if (recorded.body.length <= INLINE_BODY_CHARS) return recorded;
        const ref = bodyRef(recorded.body);
        longBodies[ref] = recorded.body;
        return { ...recorded, body: ref };
      }),
      longBodies,
    };
    writeFileSync(GOLDEN, JSON.stringify(golden));
    // Written as `npm run check` wants it, so that recording again from fd1b075 changes no byte.
    execFileSync('node_modules/.bin/biome', ['format', '--write', fileURLToPath(GOLDEN)]);
    t.pass(`recorded ${responses.length} responses in ${fileURLToPath(GOLDEN)}`);
    return;
  }

  const golden = JSON.parse(readFileSync(GOLDEN, 'utf8')) as Golden;
  t.equal(golden.recordedFrom, RECORDED_FROM, 'the golden file was recorded from the 1.0.0 code');
  t.same(
    responses.map((r) => r.request),
    golden.responses.map((r) => r.request),
    'the golden file holds these very requests (a changed list is recorded again from fd1b075)',
  );
  for (const [i, expected] of golden.responses.entries()) {
    const actual = responses[i];
    if (!actual) break;
    const { body: text, ...head } = actual;
    const { body: expectedBody, ...expectedHead } = expected;
    t.same(head, expectedHead, `${expected.request}: status line and header fields`);
    const expectedText = expectedBody.startsWith('sha256:')
      ? (golden.longBodies[expectedBody] ?? '')
      : expectedBody;
    if (text === expectedText) {
      t.pass(`${expected.request}: body`);
      continue;
    }
    // A readable failure for a body of any length: the two bodies around their first difference.
    const at = firstDifference(text, expectedText);
    const lengths = `lengths ${text.length} and ${expectedText.length}`;
    t.equal(
      excerpt(text, at),
      excerpt(expectedText, at),
      `${expected.request}: body, differs at ${at} (${lengths})`,
    );
  }
});
