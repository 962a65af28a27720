/**
 * A server's role, and libpq's `target_session_attrs` rules over it (libpq-connect): the one probe and
 * the one judgement of the connection's host choice (targetSession.ts) and of the read replicas'
 * monitor (readReplicas/monitor.ts).
 */
import type postgres from 'postgres';
import type { Queryable } from './connect.js';
import type { TargetSessionAttrs } from './postgresUrl.js';

export interface Role {
  /** A hot standby: pg_is_in_recovery(). */
  inRecovery: boolean;
  /** default_transaction_read_only is on (a primary may be set so). */
  readOnly: boolean;
}

/**
 * Asks the server behind `sql` its role, and in the same statement the columns of `also` (a fragment
 * of `sql`, e.g. the monitor's replay position).
 */
export async function probeRole<Also extends object = object>(
  sql: Queryable,
  also?: postgres.Fragment,
): Promise<Role & Also> {
  const [row] = await sql<(Role & Also)[]>`
    select pg_is_in_recovery() as "inRecovery",
           current_setting('default_transaction_read_only')::boolean as "readOnly"
           ${also ? sql`, ${also}` : sql``}`;
  return row!;
}

/** Whether libpq takes a server of `role` for `attrs`; for prefer-standby, its first choice (a standby). */
export function acceptsSession(attrs: TargetSessionAttrs, role: Role): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !role.inRecovery && !role.readOnly;
    case 'read-only':
      return role.inRecovery || role.readOnly;
    case 'primary':
      return !role.inRecovery;
    case 'standby':
    case 'prefer-standby':
      return role.inRecovery;
  }
}

/**
 * Which of several hosts `attrs` accepts, given each one's role (undefined: it did not answer). For
 * prefer-standby the answer depends on the others: a standby always, any other host only while no
 * standby `serves` (by default: answers; the monitor also asks that its lag be in bounds).
 */
export function acceptedHosts(
  attrs: TargetSessionAttrs,
  roles: readonly (Role | undefined)[],
  serves: (index: number) => boolean = () => true,
): boolean[] {
  const standbyServes =
    attrs === 'prefer-standby' && roles.some((role, index) => role?.inRecovery && serves(index));
  return roles.map(
    (role) =>
      role !== undefined && (acceptsSession(attrs, role) || (attrs === 'prefer-standby' && !standbyServes)),
  );
}

/** A role in a host list of an error message. */
export const roleName = (role: Role) =>
  role.inRecovery ? 'a standby' : role.readOnly ? 'read-only' : 'read-write';
