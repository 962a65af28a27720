/**
 * A tube whose rows an import inserted or changed gets a new series version (sql/004), in the import's
 * transaction: what the ETag and Last-Modified of its series derive from. Only tubes with such rows:
 * an import that changes nothing leaves them as they were. The importers do it because no trigger can:
 * TimescaleDB has no transition tables on hypertables, and a row trigger would cost every row.
 */
import type { Fragment, TransactionSql } from 'postgres';

/** The update, for the ids `tubeIds` selects (a subquery, or a CTE's rows). */
export const markSeriesChanged = (q: TransactionSql, tubeIds: Fragment) => q`
  update tubes set series_version = series_version + 1, series_changed_at = clock_timestamp()
  where id in (${tubeIds})`;
