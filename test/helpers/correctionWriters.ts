/**
 * The writers the corrections property tests drive (the importer and the operator's corrections), over
 * tube positions and instant numbers; and, as the control, a removal that leaves no trace.
 */
import { Readable } from 'node:stream';
import type { Sql } from '../../src/db/connect.js';
import { parseInstant } from '../../src/domain/datetime.js';
import { STATUSES } from '../../src/engine/schemas.js';
import { removeMeasurements, setStatus } from '../../src/importers/measurements/corrections.js';
import { importMeasurements } from '../../src/importers/measurements/measurements.js';
import { markSeriesChanged } from '../../src/importers/measurements/seriesChanged.js';
import { instant, type Operation, type Writers } from './corrections.js';
import { compressChunks } from './timescale.js';

type Of<K extends Operation['kind']> = Extract<Operation, { kind: K }>;

const instantOf = (at: number) => parseInstant(instant(at));

/** Each tube position's identifier. */
async function identifiers(sql: Sql, tubeIds: number[]): Promise<string[]> {
  const rows = await sql<{ id: number; identifier: string }[]>`
    select id, identifier::text from tubes where id = any(${tubeIds}::int[])`;
  return tubeIds.map((id) => rows.find((row) => row.id === id)!.identifier);
}

/** The CSV of an import operation, with the status column when it has one. */
export function importCsv(tubes: readonly string[], op: Of<'import'>): string {
  const header = `tubeIdentifier,observedAt,value${op.withStatus ? ',status' : ''}`;
  const lines = op.rows.map((row) =>
    [tubes[row.tube], instant(row.at), row.value, ...(op.withStatus ? [STATUSES[row.status!]] : [])].join(
      ',',
    ),
  );
  return `${header}\n${lines.join('\n')}\n`;
}

/** The real writers: `gwapi import measurements`, `gwapi measurements status` and `remove`. */
export function realWriters(sql: Sql): Writers {
  let known: Promise<string[]> | undefined;
  const tubesOf = (tubeIds: number[]) => (known ??= identifiers(sql, tubeIds));
  let imports = 0;
  return {
    async import(tubeIds, op) {
      const csv = importCsv(await tubesOf(tubeIds), op);
      await importMeasurements(sql, Readable.from([csv]), { name: `import ${++imports}.csv` });
    },
    async status(tubeIds, op) {
      const tubes = await tubesOf(tubeIds);
      const which = op.tubes === 'all' ? 'all' : op.tubes.map((p) => tubes[p]!);
      await setStatus(sql, which, { from: instantOf(op.from), to: instantOf(op.to) }, STATUSES[op.status]!);
    },
    async remove(tubeIds, op) {
      const tubes = await tubesOf(tubeIds);
      await removeMeasurements(sql, tubes[op.tube]!, { from: instantOf(op.from), to: instantOf(op.to) });
    },
  };
}

/** The real writers, and `compress`, which compresses every chunk of the TimescaleDB hypertable. */
export function compressingWriters(sql: Sql): Writers {
  return {
    ...realWriters(sql),
    async compress() {
      const { uncompressed } = await compressChunks(sql);
      if (uncompressed > 0) throw new Error(`${uncompressed} chunks left uncompressed`);
    },
  };
}

/** The control: a removal that deletes the rows and records no correction, so no delta can tell it. */
export const naiveRemoval =
  (sql: Sql) =>
  async (tubeIds: number[], op: Of<'remove'>): Promise<void> => {
    const id = tubeIds[op.tube]!;
    await sql.begin(async (tx) => {
      await tx`select from tubes where id = ${id} for no key update`;
      await tx`
        with gone as (
          delete from measurements
          where tube_id = ${id} and observed_at >= ${instant(op.from)} and observed_at < ${instant(op.to)}
          returning tube_id
        ), changed as (${markSeriesChanged(tx, tx`select tube_id from gone`)})
        select count(*) from gone`;
      await tx`select refresh_latest_measurements()`;
    });
  };
