/**
 * A client as a reader of docs/clients.md would write one: types generated from the served document by
 * openapi-typescript (./api.ts, written next to this file by the test), calls made with openapi-fetch.
 * Compiled with strict tsc, then run against a real server; it prints what it read as JSON.
 */
import createClient from 'openapi-fetch';
import type { paths } from './api.js';

const [base, from, to] = process.argv.slice(2) as [string, string, string];
// JSON bodies and problems only (CSV, Arrow and GeoJSON are documented too, and would make every `data`
// a union).
const client = createClient<paths, 'application/json' | 'application/problem+json'>({
  baseUrl: `${base}/v1`,
  headers: { 'X-API-Key': process.env.GWAPI_KEY },
});

// The API is read-only: no path of the generated client has a method that writes.
// @ts-expect-error POST is not an operation of any path
export const write = () => client.POST('/groundwater-monitoring-wells');

const wells = await client.GET('/groundwater-monitoring-wells');
if (!wells.data) throw new Error(`discovery: ${wells.response.status}`);
const tubeIdentifier: string = wells.data[0]!.tubes[0]!.identifier;
// Only the wells inside a box; its location is a GeoJSON point.
const boxed = await client.GET('/groundwater-monitoring-wells', { params: { query: { bbox: '5,52,6,53' } } });
if (!boxed.data) throw new Error(`discovery in a box: ${boxed.response.status}`);
const coordinates: number[] | undefined = boxed.data[0]?.location?.coordinates;

const measurements = '/groundwater-monitoring-tubes/{tubeIdentifier}/measurements';
const series = await client.GET(measurements, { params: { path: { tubeIdentifier }, query: { from, to } } });
if (!series.data) throw new Error(`series: ${series.response.status}`);
const values: number[] = series.data.measurements.map((measurement) => measurement.value);

// `to` before `from`: a 400 whose problem document is typed, `errors` included.
const refused = await client.GET(measurements, {
  params: { path: { tubeIdentifier }, query: { from: to, to: from } },
});
const errors: Record<string, string[]> | undefined = refused.error?.errors;

// Many tubes in one request, then only what was written since: the token of the first response.
const network = '/groundwater-monitoring-measurements';
const tubes = tubeIdentifier;
const everything = await client.GET(network, { params: { query: { from, to, tubes } } });
if (!everything.data) throw new Error(`network: ${everything.response.status}`);
const syncToken: string = everything.data.syncToken;
const since = await client.GET(network, { params: { query: { from, to, tubes, changedSince: syncToken } } });
if (!since.data) throw new Error(`changes: ${since.response.status}`);

// The latest of each tube, of one status only and with it (parameters of 1.3).
const latest = await client.GET('/groundwater-monitoring-measurements/latest', {
  params: { query: { tubes, status: 'provisional', include: 'status' } },
});
if (!latest.data || !Array.isArray(latest.data)) throw new Error(`latest: ${latest.response.status}`);
const latestRows = latest.data.map(({ tubeIdentifier, observedAt, value, status }) => ({
  tubeIdentifier,
  observedAt,
  value,
  status,
}));

console.log(
  JSON.stringify({
    wells: wells.data,
    boxed: { wells: boxed.data.length, coordinates },
    series: { unit: series.data.unit, from: series.data.from, values },
    refused: { status: refused.response.status, title: refused.error?.title, errors },
    network: {
      tubes: everything.data.series.map((element) => element.tubeIdentifier),
      values: everything.data.series.map((element) => element.measurements.map((m) => m.value)),
      tokenInHeader: everything.response.headers.get('Sync-Token') === syncToken,
      changes: since.data.series,
    },
    latest: latestRows,
  }),
);
