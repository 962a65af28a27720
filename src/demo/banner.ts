/**
 * What `gwapi demo` prints once it listens: the data, the demo key, the interactive reference and
 * requests to paste.
 */
import type { DemoData } from './seed.js';
import { DEMO_WELLS, type DemoTube, EXAMPLE_DEMO_TUBE, HIDDEN_DEMO_TUBE } from './wells.js';

export interface BannerInput {
  /** Where the server listens, as Fastify reports it (`http://127.0.0.1:3000`). */
  address: string;
  /** Where the data lives, for the operator (never a URL: it may hold a password). */
  database: string;
  data: DemoData;
  key: string;
  keyId: string;
}

/** The demo's requests use Dutch local time, so the `+` of the offset shows how it must be encoded. */
const TIME_ZONE = 'Europe/Amsterdam';

/** RFC 3339 in the given time zone, with its offset: `2025-03-01T01:00:00+01:00`. */
export function localDateTime(date: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
      .formatToParts(date)
      .map((part) => [part.type, part.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName!.slice(3);
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}${offset}`;
}

/** A base URL curl can reach: a wildcard bind address is reached on loopback. */
export function reachableBase(address: string): string {
  const url = new URL(address);
  if (url.hostname === '0.0.0.0') url.hostname = '127.0.0.1';
  if (url.hostname === '[::]') url.hostname = '[::1]';
  return url.origin;
}

function describeTube(tube: DemoTube): string {
  const well = DEMO_WELLS.find((w) => w.tubes.includes(tube))!;
  return `tube ${tube.number} of ${well.name}`;
}

const utc = (date: Date) => `${date.toISOString().slice(0, 19)}Z`;

export function demoBanner({ address, database, data, key, keyId }: BannerInput): string {
  const base = `${reachableBase(address)}/v1`;
  const from = encodeURIComponent(localDateTime(new Date(data.to.getTime() - 30 * 86_400_000), TIME_ZONE));
  const to = encodeURIComponent(localDateTime(data.to, TIME_ZONE));
  const series = (tube: DemoTube) =>
    `'${base}/groundwater-monitoring-tubes/${tube.identifier}/measurements?from=${from}&to=${to}'`;
  const network = `${base}/groundwater-monitoring-measurements?from=${from}&to=${to}`;
  const header = `X-API-Key: ${key}`;
  const withKey = `curl -s -H '${header}'`;
  return [
    '',
    `gwapi demo is serving ${base} from ${database}.`,
    `Data: ${data.wells} wells, ${data.tubes} tubes, ${data.measurements.toLocaleString('en-US')} measurements ` +
      `every 15 minutes from ${utc(data.from)} to ${utc(data.to)}${data.seeded ? '' : ' (seeded by an earlier run)'}.`,
    '',
    'Demo key (shown only now):',
    key,
    `Key id: ${keyId}`,
    `It may read every demo tube except ${describeTube(HIDDEN_DEMO_TUBE)}, which stays hidden from it.`,
    '',
    `Interactive reference: ${base}/docs (in a browser: Authorize with the key, then Try it out).`,
    '',
    'Try:',
    '  # the wells and tubes this key may see',
    `  ${withKey} ${base}/groundwater-monitoring-wells`,
    `  # the last 30 days of ${describeTube(EXAMPLE_DEMO_TUBE)} (Dutch local time: encode + as %2B)`,
    `  ${withKey} ${series(EXAMPLE_DEMO_TUBE)}`,
    '  # the hidden tube: 404, exactly like a tube that does not exist',
    `  ${withKey} -i ${series(HIDDEN_DEMO_TUBE)}`,
    '  # the wells on a map: GeoJSON, which QGIS, GDAL/OGR and geopandas open as a layer of points',
    `  ${withKey} '${base}/groundwater-monitoring-wells?format=geojson'`,
    '  # the latest level of each tube, all in one request',
    `  ${withKey} ${base}/groundwater-monitoring-measurements/latest`,
    '  # the last 30 days of every tube as Arrow (pandas, Polars, DuckDB), saved under its own file name',
    `  ${withKey} -OJ '${network}&format=arrow'`,
    '  # a sync: keep the Sync-Token of a response, then ask for only what changed since it',
    `  TOKEN=$(${withKey} -o /dev/null -D - '${network}' | grep -i '^sync-token:' | cut -d' ' -f2 | tr -d '\\r')`,
    `  ${withKey} '${network}&changedSince='"$TOKEN"`,
    '  # QGIS and GDAL: the OGC API - Features connection (in QGIS, add the key to the URL as ?api_key=…)',
    `  ogrinfo --config GDAL_HTTP_HEADERS '${header}' OAPIF:${base}/ogc`,
    '  # the OpenAPI document (public)',
    `  curl -s ${base}/openapi.json`,
    '',
    'Stop with Ctrl-C. `gwapi demo` again reuses the data and prints a new key.',
    '',
  ].join('\n');
}
