/** The writers the corrections property tests drive, over tube positions and instant numbers. */
import type { Sql } from '../../src/db/connect.js';
import { recordUpsertedRuns } from '../../src/importers/measurements/changeLog.js';
import { markSeriesChanged } from '../../src/importers/measurements/seriesChanged.js';
import { instant, type Operation } from './corrections.js';

type Of<K extends Operation['kind']> = Extract<Operation, { kind: K }>;
type Importer = (rows: [tube: string, observedAt: string, value: string][]) => Promise<void>;

export function correctionWriters(sql: Sql, importRows: Importer) {
  const identifiers = async (tubeIds: number[], positions: number[]) => {
    const rows = await sql<{ identifier: string }[]>`
      select identifier::text from tubes t join unnest(${positions.map((p) => tubeIds[p]!)}::int[]) with ordinality l (id, n)
      on t.id = l.id order by l.n`;
    return rows.map((row) => row.identifier);
  };
  const status = async (tubeIds: number[], op: Omit<Of<'status'>, 'kind'>) => {
    const ids = op.tubes === 'all' ? tubeIds : op.tubes.map((p) => tubeIds[p]!);
    await sql.begin(async (tx) => {
      await tx`select from tubes where id = any(${ids}::int[]) order by id for no key update`;
      await tx`
        with old as (
          select tube_id, observed_at, value, status from measurements
          where tube_id = any(${ids}::int[]) and observed_at >= ${instant(op.from)} and observed_at < ${instant(op.to)}
            and status <> ${op.status}
        ), prior as (
          insert into measurement_prior_versions (tube_id, observed_at, value, status) select * from old
        ), written as (
          update measurements m set status = ${op.status} from old
          where m.tube_id = old.tube_id and m.observed_at = old.observed_at
          returning m.tube_id, m.observed_at, false as inserted
        ), changed as (${markSeriesChanged(tx, tx`select tube_id from written`)}),
        logged as (${recordUpsertedRuns(tx)})
        select count(*) from written`;
      await tx`select refresh_latest_measurements()`;
    });
  };
  return {
    async import(tubeIds: number[], op: Of<'import'>) {
      const tubes = await identifiers(
        tubeIds,
        op.rows.map((row) => row.tube),
      );
      await importRows(op.rows.map((row, i) => [tubes[i]!, instant(row.at), String(row.value)]));
      for (const row of op.rows) {
        if (row.status !== undefined) {
          await status(tubeIds, { status: row.status, tubes: [row.tube], from: row.at, to: row.at + 1 });
        }
      }
    },
    status,
    remove: removal(sql, true),
    compress: undefined as undefined | (() => Promise<void>),
  };
}

function removal(sql: Sql, keepPriorVersions: boolean) {
  return async (tubeIds: number[], op: Of<'remove'>) => {
    const id = tubeIds[op.tube]!;
    await sql.begin(async (tx) => {
      await tx`select from tubes where id = ${id} for no key update`;
      await tx`
        with gone as (
          delete from measurements
          where tube_id = ${id} and observed_at >= ${instant(op.from)} and observed_at < ${instant(op.to)}
          returning tube_id, observed_at, value, status
        ), prior as (
          insert into measurement_prior_versions (tube_id, observed_at, value, status)
          select * from gone where ${keepPriorVersions}
        ), changed as (${markSeriesChanged(tx, tx`select tube_id from gone`)})
        select count(*) from gone`;
      await tx`select refresh_latest_measurements()`;
    });
  };
}

/** A removal that leaves no trace in the change history: the design the control must catch. */
export const naiveRemoval = (sql: Sql) => removal(sql, false);
