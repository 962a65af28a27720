/** A tube as a document's plan reads it. */
import type { Queryable } from '../../db/connect.js';
import type { SeriesHead } from '../schemas.js';
import type { Interval } from './selects.js';

export interface TubeRow {
  /** Internal id: what grants and measurements refer to. */
  id: number;
  unit: string;
  verticalDatum: string;
  /** What the series' validators derive from (sql/004): a bigint as text, and its time. */
  seriesVersion: string;
  seriesChangedAt: Date;
}

/** A tube by its identifier (canonical lower-case UUID text). */
export async function findTube(sql: Queryable, identifier: string): Promise<TubeRow | undefined> {
  const [tube] = await sql<TubeRow[]>`
    select id, unit, vertical_datum as "verticalDatum", series_version::text as "seriesVersion",
           series_changed_at as "seriesChangedAt"
    from tubes where identifier = ${identifier}::uuid`;
  return tube;
}

/** The head of a tube's series, as every format writes it. */
export const seriesHead = (
  tube: Pick<TubeRow, 'unit' | 'verticalDatum'>,
  tubeIdentifier: string,
  { from, to, aggregate }: Interval,
): SeriesHead => ({
  tubeIdentifier,
  from,
  to,
  ...(aggregate && { aggregate }),
  unit: tube.unit,
  verticalDatum: tube.verticalDatum,
});
