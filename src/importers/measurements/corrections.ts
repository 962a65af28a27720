/**
 * The operator's corrections (`gwapi measurements status|remove`): a status set over an interval, or one
 * tube's measurements removed over one. Each is one transaction that writes, for the rows it changed,
 * what an import writes for the rows it corrects (changeLog.ts): its tubes locked first, each row's
 * correction (its version before and after, or before and none for a removal), the series versions,
 * the latest measurements and the daily rollups. They insert nothing, so they write no runs.
 */
import type { TransactionSql } from 'postgres';
import type { Sql } from '../../db/connect.js';
import { begin } from '../../db/transaction.js';
import { formatInstant, type Instant } from '../../domain/datetime.js';
import { type Status, statusCode } from '../../domain/status.js';
import { UserError } from '../../errors.js';
import {
  lockTubes,
  recordCorrections,
  recordRemovals,
  refreshDayRollups,
  refreshLatest,
} from './changeLog.js';
import { markSeriesChanged } from './seriesChanged.js';

/** `[from, to)`. */
export interface Interval {
  from: Instant;
  to: Instant;
}

/** Lower-case tube identifiers, or every tube. */
export type Tubes = readonly string[] | 'all';

/** Sets `status` on the measurements of `tubes` in `interval` that have another; returns how many. */
export function setStatus(sql: Sql, tubes: Tubes, interval: Interval, status: Status): Promise<number> {
  return begin(
    sql,
    async (tx) => {
      const ids = await lockKnownTubes(tx, tubes);
      const code = statusCode(status);
      const [row] = await tx<{ changed: string }[]>`
      with written as (
        update measurements set status = ${code}
        where tube_id = any(${ids}::int[]) and ${within(tx, interval)} and status <> ${code}
        returning tube_id, observed_at, measurement_value(value, value_thousandths) as value, status,
                  false as inserted
      ), corrected as (${recordCorrections(tx)}),
      changed as (${markSeriesChanged(tx, tx`select tube_id from written`)})
      select count(*) as changed from written`;
      await refreshLatest(tx);
      await refreshDayRollups(tx);
      return Number(row?.changed ?? 0);
    },
    { write: true },
  );
}

/** The measurements of `tube` in `interval`, as they are now (what a removal would remove). */
export async function countMeasurements(sql: Sql, tube: string, interval: Interval): Promise<number> {
  return await begin(sql, async (tx) => {
    const ids = await knownTubeIds(tx, [tube]);
    const [row] = await tx<{ stored: string }[]>`
      select count(*) as stored from measurements where tube_id = any(${ids}::int[]) and ${within(tx, interval)}`;
    return Number(row?.stored ?? 0);
  });
}

/** Removes the measurements of `tube` in `interval`; returns how many. */
export function removeMeasurements(sql: Sql, tube: string, interval: Interval): Promise<number> {
  return begin(
    sql,
    async (tx) => {
      const ids = await lockKnownTubes(tx, [tube]);
      const [row] = await tx<{ removed: string }[]>`
      with removed as (
        delete from measurements where tube_id = any(${ids}::int[]) and ${within(tx, interval)}
        returning tube_id, observed_at, measurement_value(value, value_thousandths) as value, status
      ), corrected as (${recordRemovals(tx)}),
      changed as (${markSeriesChanged(tx, tx`select tube_id from removed`)})
      select count(*) as removed from removed`;
      await refreshLatest(tx);
      await refreshDayRollups(tx);
      return Number(row?.removed ?? 0);
    },
    { write: true },
  );
}

const within = (q: TransactionSql, { from, to }: Interval) =>
  q`observed_at >= ${formatInstant(from)}::timestamptz and observed_at < ${formatInstant(to)}::timestamptz`;

/**
 * Locks the tubes (in id order, as every writer does, before anything reads their rows) and returns
 * their ids; throws naming every unknown identifier.
 */
async function lockKnownTubes(tx: TransactionSql, tubes: Tubes): Promise<number[]> {
  await lockTubes(tx, tubes === 'all' ? tx`select identifier from tubes` : [...tubes], { nowait: false });
  return await knownTubeIds(tx, tubes);
}

/**
 * The ids, which the statements then take as a list rather than by a join with `tubes`: TimescaleDB
 * (2.23) updates only some of the rows such a join selects in a chunk partly decompressed before.
 */
async function knownTubeIds(tx: TransactionSql, tubes: Tubes): Promise<number[]> {
  if (tubes === 'all') return (await tx<{ id: number }[]>`select id from tubes`).map((row) => row.id);
  const rows = await tx<{ identifier: string; id: number | null }[]>`
    select i.identifier::text, t.id
    from unnest(${tubes}::uuid[]) as i (identifier) left join tubes t on t.identifier = i.identifier`;
  const unknown = rows.filter((row) => row.id === null).map((row) => row.identifier);
  if (unknown.length > 0) throw new UserError(`unknown tube identifier: ${unknown.join(', ')}`);
  return rows.map((row) => row.id!);
}
