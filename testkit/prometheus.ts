/**
 * A throwaway Prometheus (Debian's `prometheus` binary) on a free loopback port, with its storage in a
 * temporary folder, and the parts of its HTTP API a test asks: instant and range queries, label values.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../src/db/embedded.js';
import { type Owner, stopProcess, untilReady } from './processes.js';

/** How long Prometheus may take to open its storage and replay an empty write-ahead log. */
const START_TIMEOUT_MS = 30_000;

/** An answer of /api/v1/query or /api/v1/query_range: `error` says why an expression did not parse. */
export interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: { metric: Record<string, string> }[] };
}

export interface PrometheusServer {
  /** `http://127.0.0.1:PORT` */
  base: string;
  /** `expr` evaluated at `time` (now unless given), as rules are. */
  query(expr: string, time?: number): Promise<QueryAnswer>;
  /** `expr` over [start, end] (Unix seconds) every `step` seconds, as a Grafana panel asks. */
  queryRange(expr: string, start: number, end: number, step: number): Promise<QueryAnswer>;
  /** The values of `label` (`__name__`: every metric name stored), of series matching `match` if given. */
  labelValues(label: string, match?: string): Promise<string[]>;
}

/** Prometheus with `config` (rule_files as absolute paths), stopped when `owner` ends. */
export async function startPrometheus(owner: Owner, config: object): Promise<PrometheusServer> {
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-prometheus-'));
  owner.teardown(() => rm(dir, { recursive: true, force: true }));
  const configFile = join(dir, 'prometheus.yml');
  await writeFile(configFile, stringify(config));
  const port = await freePort();
  const child = spawn(
    'prometheus',
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  owner.teardown(() => stopProcess(child));
  await untilReady(
    child,
    (line) => (line.includes('Server is ready to receive web requests') ? true : undefined),
    {
      what: 'prometheus',
      timeoutMs: START_TIMEOUT_MS,
      streams: ['stderr'],
      spawnError: (error) => `could not be started (${error.message}): apt-get install prometheus`,
    },
  );
  const base = `http://127.0.0.1:${port}`;

  const api = async (path: string, parameters: Record<string, string>) => {
    const response = await fetch(`${base}/api/v1/${path}`, {
      method: 'POST',
      body: new URLSearchParams(parameters),
    });
    return (await response.json()) as QueryAnswer;
  };
  return {
    base,
    query: (expr, time) =>
      api('query', { query: expr, ...(time === undefined ? {} : { time: String(time) }) }),
    queryRange: (expr, start, end, step) =>
      api('query_range', { query: expr, start: String(start), end: String(end), step: String(step) }),
    async labelValues(label, match) {
      const query = match === undefined ? '' : `?${new URLSearchParams({ 'match[]': match })}`;
      const response = await fetch(`${base}/api/v1/label/${encodeURIComponent(label)}/values${query}`);
      const answer = (await response.json()) as { status: string; data?: string[]; error?: string };
      if (answer.status !== 'success') throw new Error(`label values of ${label}: ${answer.error}`);
      return answer.data ?? [];
    },
  };
}
