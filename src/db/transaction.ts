/**
 * `sql.begin` for work that may lose its connection (a restart, a switch-over of the primary).
 *
 * postgres.js (3.4.9, issues #1154 and #1208) answers a callback that fails because its connection
 * closed with a ROLLBACK written to the dead socket: an uncaught TypeError from a timer, which ends the
 * process (`gwapi import` during a switch-over), or a pooled connection that stays silent until
 * connect_timeout. So a callback whose connection is gone never settles: postgres.js rejects
 * `sql.begin` itself when the connection closes, and the server has rolled the transaction back.
 */
import type { TransactionSql } from 'postgres';
import type { Sql } from './connect.js';
import { isConnectionLost } from './errorCodes.js';

/** What a transaction callback returns once its connection is gone. */
export const neverSettles = () => new Promise<never>(() => {});

export function transaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    try {
      return await work(tx);
    } catch (error) {
      if (isConnectionLost(error)) return neverSettles();
      throw error;
    }
  }) as Promise<T>;
}
