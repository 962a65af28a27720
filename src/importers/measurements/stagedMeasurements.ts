/**
 * The SQL half of the measurements import: everything after the good rows are in the staging table.
 * SQL finds what only the database can know (unknown tubes, the same tube and instant twice in the
 * file), then the rows move into `measurements` in one statement. Runs inside the import's transaction.
 */
import type { TransactionSql } from 'postgres';
import { measurementColumns } from '../../db/valueStorage.js';
import { DEFAULT_STATUS, STATUSES, statusCode } from '../../domain/status.js';
import { type ErrorCollector, ImportRejected, type LineError, SHOWN_ERRORS } from '../importErrors.js';
import {
  lockTubes,
  recordCorrections,
  recordInsertedLatest,
  recordInsertedRuns,
  recordUpsertedRuns,
  refreshDayRollups,
  refreshLatest,
} from './changeLog.js';
import { markSeriesChanged } from './seriesChanged.js';

export interface MeasurementsImported {
  /** Good rows in the file. */
  rows: number;
  inserted: number;
  /** Rows whose (tube, observedAt) existed with another value (or, from a file with statuses, another status). */
  updated: number;
  /** Rows whose (tube, observedAt) existed with the same value (and status): left untouched. */
  unchanged: number;
}

/** What an import of rows wrote, told in more detail than a CSV import reports. */
export interface RowsImported extends MeasurementsImported {
  /**
   * Rows inserted or updated, by status code; on the direct path, where every row is inserted, as the
   * reader counted them (the CSV's does not: empty).
   */
  written: number[];
  /** Rows left out for another row of the same tube and instant (`duplicates: 'keep one'`). */
  duplicates: number;
}

/**
 * Of two rows of one tube and instant in the input: the input is refused, naming both lines (the CSV's
 * rule: a tube has one value per instant), or the higher priority, then the later line, is kept and
 * the others counted (a format's rule: real files repeat times).
 */
export type DuplicateRule = 'refuse' | 'keep one';

export interface StagingRules {
  duplicates: DuplicateRule;
  /**
   * How the rows of an unregistered tube (its identifier) are refused: each row (a CSV names its tube on
   * every line), or once at the tube's first row, with how many it has (`rows`; a format's file names
   * its tube once).
   */
  unknownTube: (identifier: string, rows: number) => Omit<LineError, 'line'>;
  unknownTubeOnce?: boolean;
}

/** How the rows are written: with `thousandths`, where the database stores them (valueStorage.ts). */
interface WriteRules extends StagingRules {
  thousandths: boolean;
}

/** What Node learned while staging the rows. */
export interface Staged {
  rows: number;
  /** The file's distinct tube identifiers, when there were few enough to keep. */
  tubes?: Set<string> | undefined;
  /** Whether the file states each row's status; without it stored rows keep theirs. */
  hasStatus?: boolean;
}

/** The staging table; it lives as long as the transaction. A row without a status is a new one's. */
export async function createStaging(tx: TransactionSql): Promise<void> {
  await tx`create temp table measurement_staging (
    line bigint not null, tube uuid not null, observed_at timestamptz not null, value float8 not null,
    status int2 not null default ${tx.unsafe(String(statusCode(DEFAULT_STATUS)))},
    priority bigint not null default 0
  ) on commit drop`;
}

/**
 * Checks the staged rows against the database and writes them; throws `ImportRejected` with every
 * error (those Node found are already in `errors`) when anything is wrong.
 */
export async function writeStaged(
  tx: TransactionSql,
  staged: Staged,
  errors: ErrorCollector,
  name: string,
  rules: WriteRules,
): Promise<RowsImported> {
  const tubes = await lookUpTubes(tx, staged.tubes);
  await addUnknownTubes(tx, errors, tubes, rules);
  if (errors.total > 0) {
    // The file is refused anyway; still report its duplicates, so one run shows every problem.
    if (rules.duplicates === 'refuse') await addDuplicates(tx, errors);
    throw new ImportRejected(name, errors);
  }
  // Held to the commit; the checks and the write below see every import of these tubes before it.
  await lockTubes(tx, staged.tubes ? [...staged.tubes] : tx`select tube from measurement_staging`, {
    nowait: false,
  });
  const source = stagedRows(tubes.onlyTubeId, rules.thousandths);
  let duplicates = 0;
  let written = await insertIfAllNew(tx, source);
  if (!written && rules.duplicates === 'keep one') {
    // The plain insert met a key: most likely a repeated time of the file, which goes before a retry.
    duplicates = await dropDuplicates(tx);
    if (duplicates > 0) written = await insertIfAllNew(tx, source);
  }
  if (!written) {
    const hasStatus = staged.hasStatus ?? false;
    written = await upsertIfNoDuplicates(tx, source, hasStatus, rules.thousandths);
    if (!written && rules.duplicates === 'keep one') {
      duplicates += await dropDuplicates(tx);
      written = await upsertIfNoDuplicates(tx, source, hasStatus, rules.thousandths);
    }
    if (!written) {
      await addDuplicates(tx, errors);
      if (errors.total === 0) throw new Error('the upsert met a row twice, yet no duplicate was found');
      throw new ImportRejected(name, errors);
    }
    await refreshLatest(tx);
  }
  await refreshDayRollups(tx);
  const inserted = sum(written.map((w) => w.inserted));
  const updated = sum(written.map((w) => w.updated));
  const byStatus = STATUSES.map(() => 0);
  for (const w of written) byStatus[w.status] = w.inserted + w.updated;
  return {
    rows: staged.rows,
    inserted,
    updated,
    unchanged: staged.rows - duplicates - inserted - updated,
    written: byStatus,
    duplicates,
  };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** Rows written of one status. */
interface Written {
  status: number;
  inserted: number;
  updated: number;
}

interface WrittenRow {
  status: number;
  inserted: string;
  updated: string;
}

const writtenRows = (rows: readonly WrittenRow[]): Written[] =>
  rows.map((row) => ({ status: row.status, inserted: Number(row.inserted), updated: Number(row.updated) }));

/**
 * Deletes every staged row but one of each tube and instant: the highest priority, then the last line
 * (then the last on it: the COPY stored them in the file's order). Returns how many went. Sorts the staging table, which is why it runs only once a write met a repeat.
 */
async function dropDuplicates(tx: TransactionSql): Promise<number> {
  const dropped = await tx`
    delete from measurement_staging s
    using (select ctid, row_number() over (partition by tube, observed_at
                                           order by priority desc, line desc, ctid desc) as rank
           from measurement_staging) r
    where s.ctid = r.ctid and r.rank > 1`;
  return dropped.count;
}

interface FoundRows {
  line: string;
  total: string;
}

/** What SQL knows of the file's distinct tubes, when Node could keep them (see MeasurementEncoder.tubes). */
interface TubeLookup {
  unknown?: string[];
  /** The internal id when the file holds one tube, as a logger's export does. */
  onlyTubeId?: number;
}

async function lookUpTubes(tx: TransactionSql, tubes?: Set<string>): Promise<TubeLookup> {
  if (!tubes) return {};
  const rows = await tx<{ identifier: string; id: number | null }[]>`
    select i.identifier::text, t.id
    from unnest(${[...tubes]}::uuid[]) as i (identifier) left join tubes t on t.identifier = i.identifier`;
  const only = rows.length === 1 ? rows[0]?.id : undefined;
  return {
    unknown: rows.filter((r) => r.id === null).map((r) => r.identifier),
    onlyTubeId: only ?? undefined,
  };
}

/**
 * Every row of an unknown tube, or each unknown tube at its first row; only the staged rows of those
 * tubes are read when they are known.
 */
async function addUnknownTubes(
  tx: TransactionSql,
  errors: ErrorCollector,
  tubes: TubeLookup,
  rules: StagingRules,
): Promise<void> {
  const unknown = tubes.unknown;
  if (unknown?.length === 0) return;
  const ofUnknownTubes = unknown
    ? tx`s.tube = any(${unknown}::uuid[])`
    : tx`not exists (select from tubes t where t.identifier = s.tube)`;
  const rows = rules.unknownTubeOnce
    ? await tx<(FoundRows & { tube: string; rows: string })[]>`
        select min(line) as line, tube::text, count(*) as rows, count(*) over () as total
        from measurement_staging s where ${ofUnknownTubes}
        group by tube order by 1 limit ${SHOWN_ERRORS}`
    : await tx<(FoundRows & { tube: string; rows: string })[]>`
        select line, tube::text, 1 as rows, count(*) over () as total
        from measurement_staging s where ${ofUnknownTubes}
        order by line limit ${SHOWN_ERRORS}`;
  addFound(errors, rows, (row) => rules.unknownTube(row.tube, Number(row.rows)));
}

/**
 * The staged rows as (tube_id, observed_at, value, status), and `value_thousandths` where the database
 * stores them, each value encoded by sql/016's measurement_thousandths; a file of one tube needs no join
 * for the tube.
 */
interface StagedRows {
  columns: string;
  select: (q: TransactionSql) => ReturnType<TransactionSql>;
}

function stagedRows(onlyTubeId: number | undefined, thousandths: boolean): StagedRows {
  const values = (q: TransactionSql) =>
    thousandths
      ? q`case when measurement_thousandths(s.value) is null then s.value end, s.status,
          measurement_thousandths(s.value)`
      : q`s.value, s.status`;
  const tubeId = onlyTubeId;
  return {
    columns: measurementColumns(thousandths),
    select:
      tubeId !== undefined
        ? (q) => q`select ${tubeId}::integer, s.observed_at, ${values(q)} from measurement_staging s`
        : (q) => q`
            select t.id, s.observed_at, ${values(q)}
            from measurement_staging s join tubes t on t.identifier = s.tube`,
  };
}

/** Rows that repeat an earlier row's tube and instant (offsets normalised: it is the same instant). */
async function addDuplicates(tx: TransactionSql, errors: ErrorCollector): Promise<void> {
  const rows = await tx<(FoundRows & { first: string })[]>`
    select line, first, count(*) over () as total
    from (select line, min(line) over (partition by tube, observed_at) as first from measurement_staging) s
    where line <> first
    order by line limit ${SHOWN_ERRORS}`;
  addFound(errors, rows, (row) => ({
    field: 'observedAt',
    reason: `the same tube and instant as line ${row.first} (a tube has one value per instant)`,
  }));
}

function addFound<R extends FoundRows>(
  errors: ErrorCollector,
  rows: readonly R[],
  describe: (row: R) => Omit<LineError, 'line'>,
): void {
  const first = rows.map((row) => ({ line: Number(row.line), ...describe(row) }));
  errors.addCounted(first, Number(rows[0]?.total ?? 0));
}

/**
 * The common case, new data for a time range the database has nothing for yet, costs far less through a
 * plain INSERT than through the upsert: ON CONFLICT makes every row a speculative insertion (an extra
 * index probe and WAL record each; docs/decisions/0008-upsert-change-log.md). So when no stored row of any
 * tube falls inside the file's time range of that tube, a plain INSERT does exactly what the upsert would.
 * Should it still meet a conflict (a duplicate inside the file), it is undone and the upsert takes over. The
 * tubes are locked (writeStaged), so no other import can write into the range meanwhile. Its latest
 * measurements come from its own rows in the same statement (recordInsertedLatest), not from a search.
 */
async function insertIfAllNew(tx: TransactionSql, source: StagedRows): Promise<Written[] | undefined> {
  const [range] = await tx<{ overlaps: boolean }[]>`
    select exists (
      select
      from (select tube, min(observed_at) as first, max(observed_at) as last
            from measurement_staging group by tube) r
      join tubes t on t.identifier = r.tube
      cross join lateral (select from measurements m
                          where m.tube_id = t.id and m.observed_at between r.first and r.last limit 1) stored
    ) as overlaps`;
  if (range?.overlaps) return undefined;
  try {
    return await tx.savepoint(async (sp) => {
      const written = await sp<WrittenRow[]>`
        with written as (
          insert into measurements (${sp.unsafe(source.columns)}) ${source.select(sp)}
          returning tube_id, observed_at, measurement_value(value, value_thousandths) as value, status
        ), changed as (${markSeriesChanged(sp, sp`select tube_id from written`)}),
        logged as (${recordInsertedRuns(sp)}),
        latest as (${recordInsertedLatest(sp)})
        select status, count(*) as inserted, 0 as updated from written group by status`;
      return writtenRows(written);
    });
  } catch (error) {
    if ((error as { code?: string }).code === '23505') return undefined;
    throw error;
  }
}

/**
 * The upsert, for files that touch stored ranges. A value that is already there is not rewritten (no new row version, no WAL), so
 * re-importing a file changes nothing. A file with statuses sets the status too, and a row is unchanged
 * only when both are; a file without them leaves stored statuses as they are. Each changed row's
 * version before and after goes to the corrections, in the same statement. Duplicates in the file are not
 * searched for up front, which would cost a sort of the whole file: the upsert itself fails on them
 * ("cannot affect row a second time"), inside a savepoint, and returns undefined; only then are they
 * looked up (writeStaged).
 */
async function upsertIfNoDuplicates(
  tx: TransactionSql,
  source: StagedRows,
  hasStatus: boolean,
  thousandths: boolean,
): Promise<Written[] | undefined> {
  // Stored either way (valueStorage.ts), a row is unchanged when its decoded value is the file's.
  const stored = 'measurement_value(measurements.value, measurements.value_thousandths)';
  const imported = 'measurement_value(excluded.value, excluded.value_thousandths)';
  const setValue = thousandths
    ? 'value = excluded.value, value_thousandths = excluded.value_thousandths'
    : 'value = excluded.value';
  try {
    return await tx.savepoint(async (sp) => {
      // xmax = 0 tells a freshly inserted row from an updated one (an updated row carries the xid that
      // locked it): PostgreSQL's well-known way to count the two outcomes of one upsert.
      const counts = await sp<WrittenRow[]>`
        with written as (
          insert into measurements (${sp.unsafe(source.columns)}) ${source.select(sp)}
          on conflict (tube_id, observed_at) do update
            ${sp.unsafe(
              hasStatus
                ? `set ${setValue}, status = excluded.status
                   where (${stored}, measurements.status) is distinct from (${imported}, excluded.status)`
                : `set ${setValue} where ${stored} is distinct from ${imported}`,
            )}
          returning tube_id, observed_at, measurement_value(value, value_thousandths) as value, status,
                    xmax = 0 as inserted
        ), changed as (${markSeriesChanged(sp, sp`select tube_id from written`)}),
        logged as (${recordUpsertedRuns(sp, { corrected: false })}),
        logged_corrected as (${recordUpsertedRuns(sp, { corrected: true })}),
        corrected as (${recordCorrections(sp)})
        select status, count(*) filter (where inserted) as inserted,
               count(*) filter (where not inserted) as updated
        from written group by status`;
      return writtenRows(counts);
    });
  } catch (error) {
    if ((error as { code?: string }).code !== '21000') throw error;
    return undefined;
  }
}
