/** `gwapi import <format> FILE…` run as the operator runs it on a fresh database, then read back over HTTP as a client reads it. */

import { setTimeout as sleep } from 'node:timers/promises';
import type { Test } from 'tap';
import { createKey } from '../../src/keys/store.js';
import { VERSION_FRESH_MS } from '../../src/v1/wells/discoveryCache.js';
import { rememberKey } from '../../testkit/outputCapture.js';
import { startApi, type TestApi } from './api.js';
import { type CliResult, runCli } from './cli.js';
import { get } from './http.js';

const V1 = '/v1';

/** A discovery well as JSON gives it. */
export interface DiscoveredWell {
  name: string;
  location?: { type: 'Point'; coordinates: [number, number] } | null;
  tubes: {
    identifier: string;
    number: string;
    unit: string;
    verticalDatum: string;
    groundLevel?: number;
    tubeTop?: number;
    screenTop?: number;
    screenBottom?: number;
  }[];
}

/** One measurement of a series or a network with `include=status`. */
export interface StatedMeasurement {
  observedAt: string;
  value: number;
  status: string;
}

/** A tube's latest level with `include=status`, as the format tests compare it. */
export interface StatedLatest extends StatedMeasurement {
  tubeIdentifier: string;
}

/** One tube's levels of a network response. */
export interface NetworkSeries {
  tubeIdentifier: string;
  measurements: StatedMeasurement[];
}

export interface FormatImportWorld {
  api: TestApi;
  /** Runs `gwapi import ARGS…` (`['dino', file]`) against the world's database; `input` is standard input. */
  gwapi(args: string[], input?: string | Buffer): Promise<CliResult>;
  /** Tells discovery that the database was written other than by `gwapi` (see `wells`). */
  wrote(): void;
  /** Discovery as JSON, once every process would see the last write (it reads the registry version at most once a VERSION_FRESH_MS). */
  wells(): Promise<DiscoveredWell[]>;
  /** Discovery as GeoJSON, as `wells`. */
  wellsGeoJson(): Promise<{ type: 'FeatureCollection'; features: unknown[] }>;
  /** A tube's series over [from, to) with `include=status`. */
  series(tube: string, from: string, to: string): Promise<StatedMeasurement[]>;
  /** Latest of every tube, with statuses. */
  latest(): Promise<unknown[]>;
  /** Latest of every tube: its tube, time, value and status, by tube identifier. */
  statedLatest(): Promise<StatedLatest[]>;
  /** The tubes the change log names, by identifier. */
  changedTubes(): Promise<string[]>;
  /** The network over [from, to) with `include=status`, and `changedSince` when given: its series and its sync token. */
  network(
    from: string,
    to: string,
    changedSince?: string,
  ): Promise<{ syncToken: string; series: NetworkSeries[] }>;
}

export async function formatImportWorld(t: Test): Promise<FormatImportWorld> {
  const api = await startApi(t, { env: { LIMITS_ENABLED: 'false' } });
  const { key } = await createKey(api.db.sql, { name: 'format import', tubeIdentifiers: [], allTubes: true });
  rememberKey(key);
  const read = async (path: string, headers: Record<string, string> = {}) => {
    const response = await get(api.base, `${V1}${path}`, { 'x-api-key': key, ...headers });
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${response.body}`);
    return JSON.parse(response.body);
  };
  let written = 0;
  const discovery = async (query: string) => {
    const wait = written + VERSION_FRESH_MS + 50 - performance.now();
    if (wait > 0) await sleep(wait);
    return read(`/groundwater-monitoring-wells${query}`);
  };
  const interval = (from: string, to: string) =>
    `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}&include=status`;
  const latest = () => read('/groundwater-monitoring-measurements/latest?include=status');
  return {
    api,
    gwapi: async (args, input) => {
      const result = await runCli(['import', ...args], {
        env: { DATABASE_URL: api.db.url },
        ...(input ? { input } : {}),
      });
      written = performance.now();
      return result;
    },
    wrote: () => {
      written = performance.now();
    },
    wells: () => discovery(''),
    wellsGeoJson: () => discovery('?format=geojson'),
    series: async (tube, from, to) =>
      (await read(`/groundwater-monitoring-tubes/${tube}/measurements?${interval(from, to)}`)).measurements,
    latest,
    statedLatest: async () =>
      ((await latest()) as StatedLatest[])
        .map(({ tubeIdentifier, observedAt, value, status }) => ({
          tubeIdentifier,
          observedAt,
          value,
          status,
        }))
        .sort((a, b) => a.tubeIdentifier.localeCompare(b.tubeIdentifier)),
    changedTubes: async () =>
      (
        await api.db.sql`
          select distinct tubes.identifier::text as tube
          from measurement_changes join tubes on tubes.id = measurement_changes.tube_id
          order by tube`
      ).map((row) => row.tube as string),
    network: (from, to, changedSince) =>
      read(
        `/groundwater-monitoring-measurements?${interval(from, to)}` +
          (changedSince ? `&changedSince=${encodeURIComponent(changedSince)}` : ''),
      ),
  };
}
