/**
 * Sync tokens across a change of primary: documents of the import tube taken with their tokens before
 * the change, and afterwards the delta since each, applied to the rows it came with as a client applies
 * it, compared with the whole document as the service then has it. A token whose transactions the new
 * primary lacks must be refused (410); one whose place the new primary's history holds must give the
 * exact delta (200).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type ReplicaOptions, spawnReplica } from '../gwapi.js';
import type { Owner } from '../processes.js';
import { IMPORTS_FROM, IMPORTS_TO, type ProbeFixture } from './primaryProbes.js';
import { every } from './timedLoops.js';

/** A network document of the import tube, as a client keeps it. */
export interface TakenDocument {
  token: string;
  /** observedAt → value, the rows the document held. */
  rows: Map<string, number>;
  startedAt: number;
  endedAt: number;
}

export type TokenVerdict =
  /** 200, and the rows it came with plus the delta are exactly the document now. */
  | 'exact delta'
  /** 200, but the rows plus the delta differ from the document now: a client's copy silently wrong. */
  | 'wrong delta'
  | 'refused (410)'
  | 'other';

export interface TokenCheck {
  taken: TakenDocument;
  status: number;
  verdict: TokenVerdict;
  /** Rows the copy holds that the document now lacks (or holds with another value), and the reverse. */
  extra: number;
  missing: number;
  /** The values of those rows: the imports' rounds. */
  extraValues: number[];
  missingValues: number[];
}

const PERIOD_MS = 500;
const UNAVAILABLE_RETRIES = 20;

const networkPath = (tube: string, changedSince?: string) =>
  `/v1/groundwater-monitoring-measurements?tubes=${tube}&from=${IMPORTS_FROM}&to=${IMPORTS_TO}&include=status` +
  (changedSince ? `&changedSince=${changedSince}` : '');

interface NetworkDocument {
  syncToken: string;
  series: { measurements: { observedAt: string; value: number; status: string }[] }[];
}

/** GET as JSON, waiting out 503s (a standby not yet caught up with the token), at most a few times. */
async function getDocument(
  base: string,
  path: string,
  key: string,
): Promise<{ status: number; body?: NetworkDocument }> {
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${base}${path}`, {
      headers: { 'x-api-key': key, accept: 'application/json' },
    });
    if (response.status === 503 && attempt < UNAVAILABLE_RETRIES) {
      await response.arrayBuffer();
      await sleep(Number(response.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    if (response.status !== 200) {
      await response.arrayBuffer();
      return { status: response.status };
    }
    return { status: 200, body: (await response.json()) as NetworkDocument };
  }
}

const rowsOf = (document: NetworkDocument) =>
  new Map(
    document.series.flatMap((series) => series.measurements.map((m) => [m.observedAt, m.value] as const)),
  );

/** Takes the import tube's document every moment from `base` until stopped. */
export function takeDocuments(base: string, key: string, tube: string) {
  return every<TakenDocument>(PERIOD_MS, async () => {
    const startedAt = performance.now();
    try {
      const { body } = await getDocument(base, networkPath(tube), key);
      if (body) return { token: body.syncToken, rows: rowsOf(body), startedAt, endedAt: performance.now() };
    } catch {}
    return undefined;
  });
}

/**
 * The delta since each taken document's token from `base`, applied to its rows, against the whole
 * document from `base` now (nothing may be written meanwhile).
 */
export async function checkTokens(
  base: string,
  key: string,
  tube: string,
  taken: TakenDocument[],
): Promise<TokenCheck[]> {
  const now = await getDocument(base, networkPath(tube), key);
  if (!now.body) throw new Error(`the import tube's document: HTTP ${now.status}`);
  const current = rowsOf(now.body);
  const checks: TokenCheck[] = [];
  for (const document of taken) {
    const delta = await getDocument(base, networkPath(tube, document.token), key);
    if (delta.status !== 200 || !delta.body) {
      checks.push({
        taken: document,
        status: delta.status,
        verdict: delta.status === 410 ? 'refused (410)' : 'other',
        extra: 0,
        missing: 0,
        extraValues: [],
        missingValues: [],
      });
      continue;
    }
    const copy = new Map(document.rows);
    for (const series of delta.body.series) {
      for (const row of series.measurements) {
        if (row.status === 'removed') copy.delete(row.observedAt);
        else copy.set(row.observedAt, row.value);
      }
    }
    const extra = [...copy].filter(([at, value]) => current.get(at) !== value);
    const missing = [...current].filter(([at, value]) => copy.get(at) !== value);
    const values = (rows: [string, number][]) => [...new Set(rows.map(([, value]) => value))];
    checks.push({
      taken: document,
      status: 200,
      verdict: extra.length === 0 && missing.length === 0 ? 'exact delta' : 'wrong delta',
      extra: extra.length,
      missing: missing.length,
      extraValues: values(extra),
      missingValues: values(missing),
    });
  }
  return checks;
}

/**
 * A `gwapi serve` reading from the primary alone (DATABASE_URL, no read replicas), taking the import
 * tube's document every moment once `start` is called: the primary's own tokens, until `stopTaking`.
 */
export async function primaryTokens(options: {
  databaseUrl: string;
  fixture: ProbeFixture;
  owner?: Owner;
  watch?: ReplicaOptions['watch'];
}) {
  const { importTube, importTubeKey } = options.fixture;
  const reader = await spawnReplica(
    { DATABASE_URL: options.databaseUrl, LIMITS_ENABLED: 'false' },
    { owner: options.owner, watch: options.watch, keepLogs: false },
  );
  let documents: ReturnType<typeof takeDocuments> | undefined;
  return {
    start() {
      documents = takeDocuments(reader.base, importTubeKey, importTube);
    },
    stopTaking: async () => await documents?.stop(),
    /** The delta since each token taken, from `base` (the API fleet), against its document there now. */
    check: (base: string) => checkTokens(base, importTubeKey, importTube, documents?.done ?? []),
    async close() {
      await documents?.stop();
      await reader.stop();
    },
  };
}
