/** SQL literals of transaction ids and snapshots, for the change-log selects (sql.ts), which COPY reads. */

const XID8_MAX = 2n ** 64n - 1n;

/** A transaction id's decimal digits: an unsigned 64-bit bigint. */
function xidText(xid: bigint): string {
  if (typeof xid !== 'bigint' || xid < 0n || xid > XID8_MAX) throw new Error(`not an xid8: ${xid}`);
  return xid.toString();
}

/** A 64-bit transaction id as an xid8 literal. */
export const xid8Literal = (xid: bigint): string => `'${xidText(xid)}'::xid8`;

/** A snapshot (pg_current_snapshot's parts) as a pg_snapshot literal, `'xmin:xmax:xip,…'`. */
export function snapshotLiteral(snapshot: { xmin: bigint; xmax: bigint; xip: readonly bigint[] }): string {
  const xip = snapshot.xip.map(xidText).join(',');
  return `'${xidText(snapshot.xmin)}:${xidText(snapshot.xmax)}:${xip}'::pg_snapshot`;
}
