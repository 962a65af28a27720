/**
 * Where a database stands in its WAL history (sql/012_wal_history.sql), so that nothing read from one
 * history is taken for the same thing in another. A restore to a point in time goes back in the past
 * and then writes anew: the same transaction ids, series versions and change times come again for other
 * writes. PostgreSQL marks it by starting a new timeline that branches off at the restore point; a
 * promotion starts one too, branching off where the old primary's WAL ended. So a place read at
 * (timeline, LSN) is still on the current history when the timeline is one of its own and the place lies
 * before the point where it branched off: always after a planned switch-over, never for what a restore
 * or a lost transaction undid.
 */
import type { Queryable } from './connect.js';

/** A server's place now (sql wal_place()): its insert position on a primary, its replay on a standby. */
export interface WalPlace {
  /** pg_control_system().system_identifier: one per cluster (initdb), shared by its standbys. */
  system: bigint;
  timeline: number;
  lsn: bigint;
}

/** One timeline of a history: WAL in [begin, end) is its own; the current one has no end. */
export interface TimelineSpan {
  timeline: number;
  begin: bigint;
  end: bigint;
}

/** The history of a server's current timeline, oldest first, and when that timeline began. */
export interface TimelineHistory {
  system: bigint;
  spans: readonly TimelineSpan[];
  /**
   * When this server learnt of its timeline (its history file's time), as the second after it: every
   * response read on another history was read before it. The epoch for a cluster's first timeline.
   */
  began: Date;
}

/** A place as a sync token keeps it: with the beginning of its timeline, so that a reused number differs. */
export interface HistoryPlace {
  system: bigint;
  timeline: number;
  begin: bigint;
  lsn: bigint;
}

const NO_END = (1n << 64n) - 1n;

/** An LSN's number from its text (`16/B374D848`). */
export const lsnOf = (text: string): bigint => {
  const [high, low] = text.split('/') as [string, string];
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
};

/**
 * The spans of `timeline` from its history file's text (`parent<TAB>switch LSN<TAB>reason` per line):
 * each parent ends where the next begins. Undefined text (unreadable): only the current timeline is
 * known, from LSN 0, and a place on any other is taken as not on it.
 */
export function parseTimelineHistory(text: string | null | undefined, timeline: number): TimelineSpan[] {
  const spans: TimelineSpan[] = [];
  let begin = 0n;
  for (const line of (text ?? '').split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 2 || !/^\d+$/.test(fields[0]!) || fields[0]!.startsWith('#')) continue;
    const end = lsnOf(fields[1]!);
    spans.push({ timeline: Number(fields[0]), begin, end });
    begin = end;
  }
  spans.push({ timeline, begin, end: NO_END });
  return spans;
}

/** The columns of wal_place() in a select of one's own: `system`, `timeline`, `lsn` as text. */
export const WAL_PLACE_COLUMNS = `(select row(system, timeline, lsn::text)::text from wal_place()) as "walPlace"`;

/** wal_place()'s row as WAL_PLACE_COLUMNS gives it: `(system,timeline,lsn)`. */
export function walPlaceOf(row: string): WalPlace {
  const [system, timeline, lsn] = row.slice(1, -1).split(',') as [string, string, string];
  return { system: BigInt(system), timeline: Number(timeline), lsn: lsnOf(lsn) };
}

/** The place of `lsn` on `history`: on the first timeline whose span holds it (its end included). */
export function placeOn(history: TimelineHistory, lsn: bigint): HistoryPlace {
  const span = history.spans.find((candidate) => lsn <= candidate.end)!;
  return { system: history.system, timeline: span.timeline, begin: span.begin, lsn };
}

/**
 * Whether `place` is on `history`: `on` when its timeline is one of the history's, begun at the same
 * LSN, and the place lies before the timeline's end; `later` when it is on a newer timeline of the same
 * system that this server has not yet learnt of (a standby behind a promotion); `off` otherwise.
 */
export function placeOnHistory(history: TimelineHistory, place: HistoryPlace): 'on' | 'later' | 'off' {
  if (place.system !== history.system) return 'off';
  const span = history.spans.find((candidate) => candidate.timeline === place.timeline);
  if (span) return span.begin === place.begin && place.lsn <= span.end ? 'on' : 'off';
  return place.timeline > history.spans.at(-1)!.timeline ? 'later' : 'off';
}

/**
 * The histories of the timelines a process has met, each read once: a timeline's history never changes
 * (a new branch is a new timeline).
 */
export class TimelineHistories {
  private readonly known = new Map<string, Promise<TimelineHistory>>();

  /** The history of `place`'s timeline, read on `sql` the first time. */
  of(sql: Queryable, place: WalPlace): Promise<TimelineHistory> {
    const key = `${place.system}/${place.timeline}`;
    let history = this.known.get(key);
    if (!history) {
      history = readHistory(sql, place);
      this.known.set(key, history);
      // A failed read is tried again by the next request.
      history.catch(() => this.known.delete(key));
    }
    return history;
  }
}

/** The history of the server behind `sql` now, as the mark validators carry (http/conditional.ts). */
export async function historyMark(sql: Queryable): Promise<{ name: string; began: Date }> {
  const [row] = await sql<{ walPlace: string }[]>`select ${sql.unsafe(WAL_PLACE_COLUMNS)}`;
  const place = walPlaceOf(row!.walPlace);
  const { began } = await timelineHistories.of(sql, place);
  return { name: `${place.system}.${place.timeline}`, began };
}

/**
 * Whether wal_timeline_history() can read the history files, and its owner: the owner (the role that ran the migration)
 * is a superuser, or may read server files and every statistic. Without it only the current timeline is
 * known, and every token from another is a 410.
 */
export async function historyReader(sql: Queryable): Promise<{ owner: string; readable: boolean }> {
  const [row] = await sql<{ owner: string; readable: boolean }[]>`
    select r.rolname as owner,
           r.rolsuper or (pg_has_role(r.oid, 'pg_read_server_files', 'member')
                          and pg_has_role(r.oid, 'pg_read_all_stats', 'member')) as readable
    from pg_proc p join pg_roles r on r.oid = p.proowner
    where p.oid = 'wal_timeline_history(integer)'::regprocedure`;
  return row!;
}

/** The process's histories: a fact about a cluster's timeline, whichever source it was read from. */
export const timelineHistories = new TimelineHistories();

async function readHistory(sql: Queryable, { system, timeline }: WalPlace): Promise<TimelineHistory> {
  // A cluster's first timeline follows no other history.
  if (timeline === 1) return { system, spans: parseTimelineHistory(undefined, 1), began: new Date(0) };
  const [row] = await sql<{ history: string | null; writtenAt: Date | null }[]>`
    select history, written_at as "writtenAt" from wal_timeline_history(${timeline})`;
  // Unreadable, the timeline began before this process met it. Each time is of a whole second (a
  // file's, as pg_stat_file gives it; an HTTP date's): the next one is after every moment of it.
  const began = row?.writtenAt ?? new Date();
  return {
    system,
    spans: parseTimelineHistory(row?.history, timeline),
    began: new Date((Math.floor(began.getTime() / 1000) + 1) * 1000),
  };
}
