/**
 * The tubes of a key's view, kept per registry version and set of grants (latest's, and the OGC
 * collections' of tubes and latest): the list in discovery's order and each tube as the writers take it. Reading and ordering thousands of tubes costs a request
 * far more than its rows do (docs/performance.md), and the list changes only with the registry (every
 * change of a well or tube raises its version, sql/004 and sql/008) or the key's grants. What moves
 * with every import, the tubes' series versions, is read per request (latestRoute).
 */
import type { Queryable } from '../db/connect.js';
import type { LatestTube } from '../engine/write/writer.js';
import { BudgetCache } from '../http/budgetCache.js';
import { type Client, grantsCacheKey } from '../keys/clients.js';
import { type TubeInView, tubesInView } from './tubesInView.js';

/** A tube as latest writes it. */
export const latestTube = (tube: TubeInView): LatestTube => ({
  tubeIdentifier: tube.identifier,
  unit: tube.unit,
  verticalDatum: tube.verticalDatum,
  wellName: tube.wellName,
  tubeNumber: tube.number,
  location: tube.longitude === null || tube.latitude === null ? undefined : [tube.longitude, tube.latitude],
});

export interface KeyView {
  /** The registry version it was read at. */
  version: string;
  /** Every tube the key may read, in discovery's order (their series versions are not kept). */
  tubes: TubeInView[];
  /** The same, as the writers take them: one array for every request, so writers may keep their pieces. */
  latestTubes: LatestTube[];
}

/** Views kept at most (each costs one): beyond, the least recently used goes. */
const MOST_VIEWS = 32;

/** The registry version `tx` (a snapshot) sees: what a kept view is read at. */
export async function registryVersion(tx: Queryable): Promise<string> {
  const [row] = await tx<{ version: string }[]>`select version::text as version from registry_version`;
  return row!.version;
}

export class KeyViews {
  private readonly views = new BudgetCache<KeyView>(MOST_VIEWS);

  /** The key's view as of registry version `version`, which `tx` (a snapshot) sees: kept, or read now. */
  async view(tx: Queryable, client: Client, version: string): Promise<KeyView> {
    const key = `${version}|${grantsCacheKey(client)}`;
    const kept = this.views.get(key);
    if (kept) return kept;
    const tubes = await tubesInView(tx, client, undefined);
    const view = { version, tubes, latestTubes: tubes.map(latestTube) };
    this.views.set(key, view, 1);
    return view;
  }
}

/** What the body derives from besides the registry: the tubes' series, as of the response's snapshot. */
export interface SeriesState {
  /** The sum of the tubes' series versions, as text. */
  versions: string;
  /** The latest change of any of them; null for no tube. */
  changedAt: Date | null;
}

/**
 * The series state of `tubes` in the snapshot of `tx`. A series version only ever rises, with every
 * change of the tube's measurements (a value, a status, a removal) and of its identifier, number, unit
 * and datum: so, for the same tubes, a change of any of them raises the sum.
 */
export async function seriesState(tx: Queryable, tubes: readonly TubeInView[]): Promise<SeriesState> {
  const [state] = await tx<SeriesState[]>`
    select coalesce(sum(series_version), 0)::text as versions, max(series_changed_at) as "changedAt"
    from tubes where id = any(${tubes.map((tube) => tube.id)}::int[])`;
  return state!;
}

/**
 * What every latest derives from, as of one snapshot: the registry version, and the snapshot itself
 * (which transactions it sees as committed) on its history (a restored database sees the same
 * transaction ids as committed for other writes). Two statements with equal snapshots on one history see
 * the same rows, so a document read in one is the document of the other; only a committed write moves
 * it, a read never does.
 */
export interface DatabaseState {
  registryVersion: string;
  /** pg_current_snapshot(), then the system and timeline it was read on (src/db/walHistory.ts). */
  snapshot: string;
}

/** The database state in one statement: of its own snapshot, or of the transaction's. */
export async function databaseState(sql: Queryable): Promise<DatabaseState> {
  const [state] = await sql<DatabaseState[]>`
    select version::text as "registryVersion",
           pg_current_snapshot()::text || (select concat('@', system, '.', timeline) from wal_place()) as snapshot
    from registry_version`;
  return state!;
}
