/**
 * Within /v1 the contract only grows: a client that sends what a 1.0.0 or a 1.1.0 client sends gets
 * what it got before, except for the API-Version value (docs/clients.md, "Versions"). A fixed dataset,
 * fixed keys and, per version, a list of the requests its clients send go over bare sockets; every
 * response (status line, header fields, decoded body) is compared with that version's golden file.
 *
 * What may differ, and nothing else:
 * - every response: the API-Version value (it must be the served one, once); Date and X-Request-Id (the
 *   clock, the request's own id) and RateLimit's `t` (a countdown) are compared as present;
 * - 1.0.0 requests: the headers 1.1 adds (ETag, Last-Modified and Cache-Control on a 200 of discovery or
 *   series; `Accept` in their Vary);
 * - 1.1.0 requests: ETag values, which hash the API version. Each distinct tag is named by its first
 *   response (`etag:NAME`), so the file holds which responses share a tag and which do not; every tag
 *   must be strong, and the whole list is sent twice, so each tag must also be stable within a server.
 *   Requests name earlier tags (`{etag:NAME}`), which the test replaces by the value served now.
 *   Last-Modified is compared exactly: the 1.1.0 run pins the change times it derives from.
 * - 1.1.0 requests: the 400 message of a bad `format`, which lists the formats, and so `arrow` since 1.2
 *   (1.2.0: `format` now takes it): the golden body is compared with that one message replaced, and
 *   its Content-Length moved by as many bytes (FORMAT_EXTENDED).
 * - discovery (1.3.0): each tube's new `unit` and `verticalDatum`, the Content-Length they add, and
 *   `Accept` in its Vary, since its format now follows Accept (withDiscoveryExtended).
 * /v1/openapi.json is not in the lists: 1.2 adds to the document by design.
 *
 * Each golden file is recorded from the last commit of its version, by this very file:
 *   git worktree add /tmp/gwapi-X fd1b075 (1.0.0) or 3923999 (1.1.0) && cd /tmp/gwapi-X && npm ci
 *   cp …/test/v1/compatibility.test.ts test/v1/ && UPDATE_GOLDEN=1 npm test -- test/v1/compatibility.test.ts
 * and test/v1/compatibility.vX.json copied back. UPDATE_GOLDEN=1 records only the version whose commit
 * is checked out (the other is skipped). A file recorded from newer code would prove nothing: a request
 * added to a list is recorded again from that version's commit (the helpers used here are the same there).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { API_VERSION } from '../../src/contract.js';
import { NEGOTIATED_VARY } from '../../src/http/negotiation.js';
import { generateApiKey } from '../../src/keys/format.js';
import { createClientLimits } from '../../src/limits/createClientLimits.js';
import { FORMAT_MESSAGE } from '../../src/v1/measurementsQuery.js';
import { addKey, addMeasurements, addRegularSeries, addWell, revokeKey } from '../../testkit/fixtures.js';
import { rememberKey } from '../../testkit/outputCapture.js';
import { startApi } from '../helpers/api.js';
import { recordingLogger, settingsWith } from '../helpers/limits.js';
import { exchange, type RawResponse } from '../helpers/rawHttp.js';

const RECORDING = process.env.UPDATE_GOLDEN === '1';

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
  /** Values may name the tag of an earlier response: `{etag:NAME}`. */
  headers?: Record<string, string>;
  /** The name of this response's ETag when it is a new one (`etag:NAME` in the golden file). */
  tag?: string;
}

/** What a 1.0.0 client sends; every parameter and header here existed in 1.0.0. */
const REQUESTS_1_0_0: CompatRequest[] = [
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

/** Alpha 1's series change time as pinChangeTimes sets it, a second before it, and a day after. */
const ALPHA_1_CHANGED = 'Wed, 03 Jul 2024 01:00:00 GMT';
const ALPHA_1_BEFORE = 'Wed, 03 Jul 2024 00:59:59 GMT';
const ALPHA_1_AFTER = 'Thu, 04 Jul 2024 00:00:00 GMT';
const WELLS_CHANGED = 'Wed, 03 Jul 2024 03:00:00 GMT';

const csv = (query: string) => `${query}&format=csv`;
const aggregated = (query: string, aggregate: string) => `${query}&aggregate=${aggregate}`;
const ALPHA_1_DAY = series(ALPHA_1, DAY_ONE);
const ALPHA_10_DAYS = series(ALPHA_10, TWO_DAYS);
const BETA_1_YEAR = 'from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:00Z';
const EMPTY = 'from=2030-01-01T00:00:00Z&to=2030-01-02T00:00:00Z';

/** A GET with the reader's key. */
const read = (path: string, headers?: Record<string, string>, tag?: string): CompatRequest => ({
  method: 'GET',
  path,
  key: 'reader',
  ...(headers ? { headers } : {}),
  ...(tag ? { tag } : {}),
});
const ifNoneMatch = (value: string) => ({ 'if-none-match': value });
const ifModifiedSince = (value: string) => ({ 'if-modified-since': value });

/** What a 1.1.0 client sends beyond 1.0.0: conditional requests, CSV, aggregates and /v1/docs. */
const REQUESTS_1_1_0: CompatRequest[] = [
  // Conditional requests: discovery.
  read(WELLS, undefined, 'wells'),
  read(WELLS, ifNoneMatch('{etag:wells}')),
  { method: 'HEAD', path: WELLS, key: 'reader', headers: ifNoneMatch('{etag:wells}') },
  read(WELLS, ifModifiedSince(WELLS_CHANGED)),
  read(WELLS, { 'accept-encoding': 'br' }, 'wells-br'),
  read(WELLS, { 'accept-encoding': 'br', ...ifNoneMatch('{etag:wells}') }),
  { method: 'GET', path: WELLS, key: 'all', tag: 'wells-all', headers: ifNoneMatch('{etag:wells}') },
  { method: 'GET', path: WELLS, headers: ifNoneMatch('{etag:wells}') },
  { method: 'GET', path: WELLS, key: 'nothing', headers: ifNoneMatch('*') },
  // Conditional requests: a series.
  read(ALPHA_1_DAY, undefined, 'alpha1'),
  read(ALPHA_1_DAY, ifNoneMatch('{etag:alpha1}')),
  { method: 'HEAD', path: ALPHA_1_DAY, key: 'reader', headers: ifNoneMatch('{etag:alpha1}') },
  read(ALPHA_1_DAY, ifNoneMatch('W/{etag:alpha1}')),
  read(ALPHA_1_DAY, ifNoneMatch('"other", {etag:alpha1}')),
  read(ALPHA_1_DAY, ifNoneMatch('*')),
  read(ALPHA_1_DAY, ifNoneMatch('"other"')),
  read(ALPHA_1_DAY, ifNoneMatch('no tag')),
  read(ALPHA_1_DAY, ifModifiedSince(ALPHA_1_CHANGED)),
  read(ALPHA_1_DAY, ifModifiedSince(ALPHA_1_BEFORE)),
  read(ALPHA_1_DAY, ifModifiedSince(ALPHA_1_AFTER)),
  read(ALPHA_1_DAY, ifModifiedSince('Wednesday, 03-Jul-24 01:00:00 GMT')),
  read(ALPHA_1_DAY, ifModifiedSince('2024-07-04T00:00:00Z')),
  read(ALPHA_1_DAY, { ...ifNoneMatch('"other"'), ...ifModifiedSince(ALPHA_1_AFTER) }),
  read(ALPHA_1_DAY, { 'accept-encoding': 'gzip', ...ifNoneMatch('{etag:alpha1}') }, 'alpha1-gzip'),
  read(ALPHA_1_DAY, { 'accept-encoding': 'gzip', ...ifNoneMatch('{etag:alpha1-gzip}') }),
  read(
    series(ALPHA_1, 'from=2024-03-01T00:00:00Z&to=2024-03-03T00:00:00Z'),
    ifNoneMatch('{etag:alpha1}'),
    'alpha1-longer',
  ),
  { method: 'GET', path: ALPHA_1_DAY, key: 'all', headers: ifNoneMatch('{etag:alpha1}') },
  // A conditional request is an ordinary one first: key, access and parameters come before any 304.
  { method: 'GET', path: ALPHA_1_DAY, headers: ifNoneMatch('{etag:alpha1}') },
  { method: 'GET', path: ALPHA_1_DAY, key: 'nothing', headers: ifNoneMatch('*') },
  read(series(HIDDEN_1, DAY_ONE), ifNoneMatch('*')),
  read(series(ALPHA_1, 'from=x&to=y'), ifNoneMatch('*')),
  read(series(ALPHA_1, csv('from=x')), ifNoneMatch('*')),
  // CSV: by format, and by Accept with q-values.
  read(series(ALPHA_1, csv(DAY_ONE)), undefined, 'alpha1-csv'),
  { method: 'HEAD', path: series(ALPHA_1, csv(DAY_ONE)), key: 'reader' },
  read(series(ALPHA_1, `${DAY_ONE}&format=json`)),
  read(ALPHA_1_DAY, { accept: 'text/csv' }),
  read(series(ALPHA_1, csv(DAY_ONE)), ifNoneMatch('{etag:alpha1-csv}')),
  read(ALPHA_1_DAY, { accept: 'text/csv', ...ifNoneMatch('{etag:alpha1}') }),
  read(ALPHA_1_DAY, { accept: 'text/csv;q=0.5, application/json' }),
  read(ALPHA_1_DAY, { accept: 'text/csv, application/json;q=0.9' }),
  read(ALPHA_1_DAY, { accept: 'application/json;q=0.5, text/csv;q=0.5' }),
  read(ALPHA_1_DAY, { accept: 'text/*;q=0.8' }),
  read(ALPHA_1_DAY, { accept: 'text/csv;q=0' }),
  read(ALPHA_1_DAY, { accept: 'text/csv;q=0.001, */*;q=0.0009' }),
  read(ALPHA_1_DAY, { accept: 'TEXT/CSV; Q=1.0' }),
  read(series(ALPHA_1, csv(DAY_ONE)), { accept: 'application/json' }),
  read(series(ALPHA_1, `${DAY_ONE}&format=json`), { accept: 'text/csv' }),
  read(series(BETA_1, csv(BETA_1_YEAR))),
  read(series(ALPHA_1, csv(EMPTY))),
  read(series(ALPHA_1, csv('from=2024-03-01T13:00:00%2B01:00&to=2024-03-01T07:00:01.5-05:00'))),
  read(series(ALPHA_10, csv(TWO_DAYS)), undefined, 'alpha10-csv'),
  read(series(ALPHA_10, csv(TWO_DAYS)), { 'accept-encoding': 'gzip' }, 'alpha10-csv-gzip'),
  read(ALPHA_10_DAYS, { 'accept-encoding': 'br', accept: 'text/csv' }, 'alpha10-csv-br'),
  // Aggregates, in JSON and CSV.
  ...['PT15M', 'PT1H', 'P1D', 'P7D'].map((a) =>
    read(series(ALPHA_10, aggregated(TWO_DAYS, a)), undefined, `alpha10-${a}`),
  ),
  ...['PT15M', 'PT1H', 'P1D', 'P7D'].map((a) => read(series(ALPHA_10, csv(aggregated(TWO_DAYS, a))))),
  read(series(ALPHA_10, aggregated(TWO_DAYS, 'PT1H')), {
    'accept-encoding': 'gzip',
    ...ifNoneMatch('{etag:alpha10-PT1H}'),
  }),
  read(series(ALPHA_10, aggregated(TWO_DAYS, 'PT1H')), ifNoneMatch('{etag:alpha10-PT1H}')),
  read(
    series(ALPHA_10, aggregated('from=2024-05-31T00:00:00%2B02:00&to=2024-06-03T00:00:00%2B02:00', 'P1D')),
  ),
  read(series(ALPHA_10, aggregated('from=2024-06-01T10:07:30Z&to=2024-06-01T11:00:00.000001Z', 'PT15M'))),
  read(series(ALPHA_1, aggregated(DAY_ONE, 'PT1H'))),
  read(series(ALPHA_1, csv(aggregated(DAY_ONE, 'PT1H')))),
  read(series(ALPHA_1, aggregated(DAY_ONE, 'P1D'))),
  read(series(BETA_1, aggregated(BETA_1_YEAR, 'P7D'))),
  read(series(ALPHA_1, aggregated(EMPTY, 'P1D'))),
  { method: 'HEAD', path: series(ALPHA_10, aggregated(TWO_DAYS, 'P1D')), key: 'reader' },
  // The errors of the new parameters.
  ...['format=xml', 'format=CSV', 'format=', 'format=csv&format=json'].map((q) =>
    read(series(ALPHA_1, `${DAY_ONE}&${q}`)),
  ),
  read(series(ALPHA_1, `${DAY_ONE}&format=xml`), { accept: 'text/csv' }),
  ...['PT30M', 'pt1h', '', 'PT1H&aggregate=PT1H'].map((a) => read(series(ALPHA_1, aggregated(DAY_ONE, a)))),
  read(series(ALPHA_1, 'from=x&to=y&aggregate=P2D&format=tsv'), { 'accept-encoding': 'gzip' }),
  read(series(ALPHA_1, aggregated('from=2024-01-01T00:00:00Z&to=2025-01-01T00:00:01Z', 'P1D'))),
  read(series(UNKNOWN, csv(aggregated(DAY_ONE, 'P1D')))),
  read(series(UNKNOWN, `${DAY_ONE}&format=xml`)),
  { method: 'GET', path: series(ALPHA_1, csv(DAY_ONE)), key: 'nothing' },
  { method: 'HEAD', path: series(ALPHA_1, `${DAY_ONE}&format=xml`), key: 'reader' },
  // The interactive reference.
  { method: 'GET', path: '/v1/docs' },
  { method: 'HEAD', path: '/v1/docs' },
  { method: 'GET', path: '/v1/docs/' },
  { method: 'GET', path: '/v1/docs/nothing-here' },
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

/**
 * The change times Last-Modified derives from (sql/004, sql/005), pinned to distinct instants so that
 * the golden file holds which of them each response's Last-Modified is. ALPHA_2 and HIDDEN_1 change
 * last: no key of the reader's sees them, so its discovery must not say so.
 */
async function pinChangeTimes(sql: Parameters<typeof addWell>[0]) {
  await sql`update api_keys set access_changed_at = '2024-07-01T00:00:00Z'`;
  await sql`update registry_version set changed_at = '2024-07-02T00:00:00Z'`;
  await sql`update wells set changed_at = '2024-07-03T03:00:00Z' where name = 'Alpha 10'`;
  await sql`update wells set changed_at = '2024-07-03T00:00:00Z' where name <> 'Alpha 10'`;
  await sql`update tubes set series_changed_at = '2024-07-05T00:00:00Z'`;
  for (const [identifier, at] of [
    [ALPHA_1, '2024-07-03T01:00:00Z'],
    [ALPHA_10, '2024-07-03T02:00:00Z'],
    [BETA_1, '2024-07-02T12:00:00Z'],
  ] as const) {
    await sql`update tubes set series_changed_at = ${at} where identifier = ${identifier}`;
  }
}

/** The request as the golden file names it: no key value, only which key. */
function describe(request: CompatRequest): string {
  const headers = Object.entries(request.headers ?? {}).map(([name, value]) => ` [${name}: ${value}]`);
  return `${request.method} ${request.path}${request.key ? ` [key: ${request.key}]` : ''}${headers.join('')}`;
}

/** Entity tags served so far, by value: the name each is shown by. */
type TagNames = Map<string, string>;
const TAG_REFERENCE = /\{etag:([^}]+)\}/g;
/** A strong entity tag (RFC 9110 §8.8.3): no W/ prefix. */
const STRONG_TAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;

function requestBytes(request: CompatRequest, keys: Record<KeyName, string>, tags: TagNames): string {
  const valueNamed = (name: string) => {
    const value = [...tags].find(([, n]) => n === name)?.[0];
    if (value === undefined) throw new Error(`${describe(request)}: no earlier response has etag:${name}`);
    return value;
  };
  const headers = {
    host: 'localhost',
    ...(request.key ? { 'x-api-key': keys[request.key] } : {}),
    ...request.headers,
  };
  const lines = Object.entries(headers).map(
    ([name, value]) =>
      `${name}: ${value.replace(TAG_REFERENCE, (_, tagName: string) => valueNamed(tagName))}\r\n`,
  );
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

/** One header field as compared, or undefined when it is left out of the comparison. */
type FieldRule = (
  t: Test,
  request: CompatRequest,
  response: RawResponse,
  field: [string, string],
) => [string, string] | undefined;

/** 1.0.0 requests: what 1.1 adds to discovery and series is left out. */
const without1Point1Additions: FieldRule = (_t, request, response, [name, value]) => {
  const dataPath = isDataPath(request.path);
  if (dataPath && response.status === 200 && VALIDATOR_FIELDS.has(name)) return undefined;
  if (name !== 'vary' || !dataPath) return [name, value];
  const kept = value
    .split(',')
    .map((token) => token.trim())
    .filter((token) => token.toLowerCase() !== VARY_ADDED);
  return kept.length > 0 ? [name, kept.join(', ')] : undefined;
};

/** 1.1.0 requests: each ETag by its name (see the header); it must be strong. */
function namedTags(tags: TagNames): FieldRule {
  return (t, request, _response, [name, value]) => {
    if (name !== 'etag') return [name, value];
    t.match(value, STRONG_TAG, `${describe(request)}: a strong ETag`);
    let tagName = tags.get(value);
    if (tagName === undefined) {
      tagName = request.tag ?? `#${tags.size + 1}`;
      if ([...tags.values()].includes(tagName)) throw new Error(`etag:${tagName} is named twice`);
      tags.set(value, tagName);
    }
    return [name, `etag:${tagName}`];
  };
}

/** What must stay the same: everything but the volatile fields and what `rule` leaves out or names. */
function normalise(t: Test, request: CompatRequest, response: RawResponse, rule: FieldRule) {
  const versions = response.fields.filter(([name]) => name === 'api-version').map(([, value]) => value);
  t.same(versions, [API_VERSION], `${describe(request)}: one API-Version, the served one`);
  const fields: [string, string][] = [];
  for (const [name, value] of response.fields) {
    if (name === 'api-version') continue;
    if (VOLATILE_FIELDS.has(name)) {
      fields.push([name, MASKED]);
      continue;
    }
    const kept = rule(t, request, response, [name, value]);
    if (!kept) continue;
    fields.push(kept[0] === 'ratelimit' ? [kept[0], kept[1].replace(COUNTDOWN, `;t=${MASKED}`)] : kept);
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

interface Version {
  version: string;
  golden: URL;
  /** The last commit of the version: the only one its golden file is recorded from. */
  recordedFrom: string;
  requests: CompatRequest[];
  /** Runs after the seed, before the first request. */
  prepare?: (sql: Parameters<typeof addWell>[0]) => Promise<void>;
  /** How often the list is sent to one server; each run must give the same. */
  runs: number;
  rule: (tags: TagNames) => FieldRule;
  /** What a later version's compatible extensions change in a golden response, and nothing else. */
  extended?: (golden: Recorded, all: readonly Recorded[]) => Recorded;
}

/** The 1.1.0 message of a bad `format`, and the served one, which lists the formats 1.2 added. */
const FORMAT_EXTENDED = { from: '"must be json or csv"', to: JSON.stringify(FORMAT_MESSAGE) };

/**
 * A golden response with FORMAT_EXTENDED applied. A HEAD has no body to look in: its Content-Length
 * moves as that of the GET of the same request in the golden file.
 */
function withFormatsExtended(golden: Recorded, all: readonly Recorded[]): Recorded {
  const asGet = golden.request.startsWith('HEAD ')
    ? all.find((other) => other.request === `GET ${golden.request.slice('HEAD '.length)}`)
    : golden;
  const text = asGet?.body ?? '';
  if (!text.includes(FORMAT_EXTENDED.from)) return golden;
  const grown =
    Buffer.byteLength(text.replaceAll(FORMAT_EXTENDED.from, FORMAT_EXTENDED.to)) - Buffer.byteLength(text);
  const fields = golden.fields.map(([name, value]): [string, string] =>
    name === 'content-length' ? [name, String(Number(value) + grown)] : [name, value],
  );
  return { ...golden, body: golden.body.replaceAll(FORMAT_EXTENDED.from, FORMAT_EXTENDED.to), fields };
}

/** The unit and vertical datum of each tube of the dataset (seed): what 1.3 adds to discovery's tubes. */
const TUBE_UNITS: Record<string, { unit: string; verticalDatum: string }> = {
  [BETA_1]: { unit: 'cm', verticalDatum: 'MSL' },
};
const DEFAULT_UNITS = { unit: 'm', verticalDatum: 'NAP' };

const isDiscovery = (recorded: Recorded) =>
  /^(GET|HEAD) \/v1\/groundwater-monitoring-wells[ ?]/.test(recorded.request);

/**
 * A golden response of discovery with what 1.3 adds: each tube's `unit` and `verticalDatum` (the
 * dataset states no location or elevation, so those stay out) and the Content-Length they add, and,
 * where the version's rule compares it, `Accept` in Vary (discovery's format now follows Accept). A HEAD
 * grows as the GET of the same request in the golden file.
 */
function withDiscoveryExtended({ varyAccept }: { varyAccept: boolean }) {
  const grownBody = (body: string) =>
    JSON.stringify(
      (JSON.parse(body) as { name: string; tubes: { identifier: string; number: string }[] }[]).map(
        (well) => ({
          ...well,
          tubes: well.tubes.map((tube) => ({ ...tube, ...(TUBE_UNITS[tube.identifier] ?? DEFAULT_UNITS) })),
        }),
      ),
    );
  return (golden: Recorded, all: readonly Recorded[]): Recorded => {
    if (!isDiscovery(golden) || (golden.status !== 200 && golden.status !== 304)) return golden;
    const asGet = golden.request.startsWith('HEAD ')
      ? all.find((other) => other.request === `GET ${golden.request.slice('HEAD '.length)}`)
      : golden;
    const text = asGet?.body ?? '';
    const grown =
      golden.status === 200 && text !== '' ? Buffer.byteLength(grownBody(text)) - Buffer.byteLength(text) : 0;
    const fields = golden.fields.map(([name, value]): [string, string] => {
      if (name === 'content-length') return [name, String(Number(value) + grown)];
      if (name === 'vary' && varyAccept) return [name, NEGOTIATED_VARY];
      return [name, value];
    });
    const body = golden.status === 200 && golden.body !== '' ? grownBody(golden.body) : golden.body;
    return { ...golden, body, fields };
  };
}

const VERSIONS: Version[] = [
  {
    version: '1.0.0',
    golden: new URL('./compatibility.v1.0.0.json', import.meta.url),
    // fd1b075: the last commit before any 1.1 work.
    recordedFrom: 'fd1b07589cf71b84a2c7689975b1508c60df5003',
    requests: REQUESTS_1_0_0,
    runs: 1,
    rule: () => without1Point1Additions,
    // Vary is compared without Accept for 1.0.0 requests.
    extended: withDiscoveryExtended({ varyAccept: false }),
  },
  {
    version: '1.1.0',
    golden: new URL('./compatibility.v1.1.0.json', import.meta.url),
    // 3923999: the last commit of 1.1.0 code (2bbc9ae after it changed dependencies only).
    recordedFrom: '3923999bc4a60b211804887fb082733f4daa4d4b',
    requests: REQUESTS_1_1_0,
    prepare: pinChangeTimes,
    runs: 2,
    rule: namedTags,
    extended: (golden, all) =>
      withDiscoveryExtended({ varyAccept: true })(withFormatsExtended(golden, all), all),
  },
];

const head = RECORDING ? execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim() : '';
if (RECORDING && !VERSIONS.some((v) => v.recordedFrom === head))
  throw new Error(`golden files are recorded only from ${VERSIONS.map((v) => v.recordedFrom).join(' or ')}`);

/** A later run spends tokens of the same bucket: RateLimit's `r` is lower by design. */
const withoutRateLimit = (recorded: Recorded) => ({
  ...recorded,
  fields: recorded.fields.filter(([name]) => name !== 'ratelimit'),
});

async function replay(t: Test, { requests, prepare, runs, rule }: Version): Promise<Recorded[]> {
  const limits = await createClientLimits(settingsWith(LIMITS), { logger: recordingLogger() });
  const api = await startApi(t, { limits, env: LIMITS });
  const keys = await seed(api.db.sql);
  await prepare?.(api.db.sql);
  const tags: TagNames = new Map();
  const fieldRule = rule(tags);
  let first: Recorded[] | undefined;
  for (let run = 1; run <= runs; run++) {
    const responses: Recorded[] = [];
    for (const request of requests) {
      const response = await exchange(api.port, requestBytes(request, keys, tags), {
        head: request.method === 'HEAD',
      });
      responses.push({ request: describe(request), ...normalise(t, request, response, fieldRule) });
    }
    if (first)
      t.same(
        responses.map(withoutRateLimit),
        first.map(withoutRateLimit),
        `run ${run} gives what run 1 gave (tags stable within a server)`,
      );
    first ??= responses;
  }
  return first ?? [];
}

function record(t: Test, { golden, recordedFrom }: Version, responses: Recorded[]) {
  const longBodies: Record<string, string> = {};
  const file: Golden = {
    recordedFrom,
    responses: responses.map((recorded) => {
      if (recorded.body.length <= INLINE_BODY_CHARS) return recorded;
      const ref = bodyRef(recorded.body);
      longBodies[ref] = recorded.body;
      return { ...recorded, body: ref };
    }),
    longBodies,
  };
  writeFileSync(golden, JSON.stringify(file));
  // Written as `npm run check` wants it, so that recording again from the same commit changes no byte.
  execFileSync('node_modules/.bin/biome', ['format', '--write', fileURLToPath(golden)]);
  t.pass(`recorded ${responses.length} responses in ${fileURLToPath(golden)}`);
}

function compare(t: Test, { golden: goldenUrl, recordedFrom, extended }: Version, responses: Recorded[]) {
  const golden = JSON.parse(readFileSync(goldenUrl, 'utf8')) as Golden;
  t.equal(golden.recordedFrom, recordedFrom, 'the golden file was recorded from the version it stands for');
  t.same(
    responses.map((r) => r.request),
    golden.responses.map((r) => r.request),
    'the golden file holds these very requests (a changed list is recorded again from its commit)',
  );
  for (const [i, recorded] of golden.responses.entries()) {
    const expected = extended ? extended(recorded, golden.responses) : recorded;
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
}

for (const version of VERSIONS) {
  const skip = RECORDING && version.recordedFrom !== head && `recording from ${head}, not ${version.version}`;
  t.test(`a ${version.version} client gets what it got from ${version.version}`, { skip }, async (t) => {
    const responses = await replay(t, version);
    if (RECORDING) record(t, version, responses);
    else compare(t, version, responses);
  });
}
