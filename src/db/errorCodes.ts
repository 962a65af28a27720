/**
 * The one table of database error codes by meaning: PostgreSQL's SQLSTATEs, postgres.js's own codes,
 * Node's socket errors and ours (targetSession.ts). What a failure means decides what is done about it:
 * a read retried on a new connection (retry.ts), sent to another replica (readReplicas/readSources.ts),
 * or refused with 503 + Retry-After (http/problems). connectionFailure.ts words the same codes for
 * operators. A code not in the table is the query's own failure: none of these.
 */

export type ErrorMeaning =
  /**
   * The session is gone (a restart, a switch-over, pg_terminate_backend): postgres.js reconnects on the
   * pool's next use, so the same read on a new connection may well succeed.
   */
  | 'lost'
  /** This server cannot be reached now: another one may answer; else the client is told to retry. */
  | 'unreachable'
  /**
   * The database cannot take this query now, whichever server asks: no host of a multi-host URL is the
   * one asked for, or the server is (now) a standby. A moment later it may well: 503 + Retry-After
   * instead of a 500 for an operations event such as a switch-over.
   */
  | 'unavailable'
  /**
   * This server refused this read for a reason of its own that does not pass by waiting (a standby's
   * recovery conflict, a host name that does not resolve): another replica may answer, but it is no
   * passing state of the database to tell the client of.
   */
  | 'elsewhere';

/** By code, or by SQLSTATE class (two characters: every code of the class). */
export const ERROR_MEANINGS: Readonly<Record<string, ErrorMeaning>> = {
  '57P01': 'lost', // admin_shutdown (pg_terminate_backend, smart/fast shutdown)
  '57P02': 'lost', // crash_shutdown
  '57P03': 'lost', // cannot_connect_now (starting up, shutting down)
  CONNECTION_CLOSED: 'lost',
  CONNECTION_ENDED: 'lost',
  CONNECTION_DESTROYED: 'lost',
  ECONNRESET: 'lost',
  EPIPE: 'lost',
  ECONNREFUSED: 'unreachable',
  ETIMEDOUT: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  CONNECT_TIMEOUT: 'unreachable',
  NO_SUITABLE_HOST: 'unavailable',
  '25006': 'unavailable', // read_only_sql_transaction: a write on a server that is (now) a standby
  '40001': 'elsewhere', // serialization_failure: canceling statement due to conflict with recovery
  ENOTFOUND: 'elsewhere',
  '08': 'unavailable', // class 08, connection exception
};

/** What may be done after a failure of each meaning. */
export const CONSEQUENCES: Readonly<
  Record<ErrorMeaning, { retrySameSource: boolean; tryElsewhere: boolean; tellClientToRetry: boolean }>
> = {
  lost: { retrySameSource: true, tryElsewhere: true, tellClientToRetry: true },
  unreachable: { retrySameSource: false, tryElsewhere: true, tellClientToRetry: true },
  unavailable: { retrySameSource: false, tryElsewhere: false, tellClientToRetry: true },
  elsewhere: { retrySameSource: false, tryElsewhere: true, tellClientToRetry: false },
};

/**
 * postgres.js (3.4.9, issues #1154 and #1208) sends a small write from a timer; when its connection
 * closed in between (a reserved connection or a transaction's, which the pool cannot hand elsewhere),
 * it throws this TypeError from that timer, beyond any caller's reach: a lost connection.
 */
export function isWriteOnClosedConnection(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /\bat \S*nextWrite \(.*[\\/]postgres[\\/](?:cjs[\\/])?src[\\/]connection\.js/.test(error.stack ?? '')
  );
}

/** What `error` means, by its code; undefined for a failure of the query itself. */
export function meaningOf(error: unknown): ErrorMeaning | undefined {
  if (isWriteOnClosedConnection(error)) return 'lost';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  const sqlClass = code.slice(0, 2);
  if (Object.hasOwn(ERROR_MEANINGS, code)) return ERROR_MEANINGS[code];
  return Object.hasOwn(ERROR_MEANINGS, sqlClass) ? ERROR_MEANINGS[sqlClass] : undefined;
}

const consequences = (error: unknown) => {
  const meaning = meaningOf(error);
  return meaning && CONSEQUENCES[meaning];
};

/** The connection was lost: the same read may run again, once, on a new connection (retry.ts). */
export const isConnectionLost = (error: unknown): boolean => consequences(error)?.retrySameSource ?? false;

/** Another read source (a replica, the primary) may answer the read instead. */
export const mayTryElsewhere = (error: unknown): boolean => consequences(error)?.tryElsewhere ?? false;

/**
 * PostgreSQL rolled a write transaction back to break a deadlock (40P01) or a serialization conflict
 * (40001; on a standby the same code is a recovery conflict, `elsewhere`): the same transaction, run
 * again, may well commit (retry.ts).
 */
export const isTransactionConflict = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
};

/** The database cannot take the query now: 503 + Retry-After rather than 500. */
export const isDatabaseUnavailable = (error: unknown): boolean =>
  consequences(error)?.tellClientToRetry ?? false;
