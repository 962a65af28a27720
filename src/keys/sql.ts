import type { Queryable } from '../db/connect.js';

export interface ClientRow {
  keyId: string;
  allTubes: boolean;
  /** Internal ids of the tubes granted one by one. */
  tubeIds: number[];
  /** When a grant or the all-tubes flag last changed (sql/004). */
  accessChangedAt: Date;
}

/** The live (not revoked) key with this SHA-256 hash, with its grants; one round trip. */
export async function findClientByKeyHash(sql: Queryable, keyHash: Buffer): Promise<ClientRow | undefined> {
  const [row] = await sql<ClientRow[]>`
    select k.id as "keyId",
           k.all_tubes as "allTubes",
           k.access_changed_at as "accessChangedAt",
           coalesce(array_agg(g.tube_id) filter (where g.tube_id is not null), '{}') as "tubeIds"
    from api_keys k
    left join api_key_grants g on g.key_id = k.id
    where k.key_hash = ${keyHash} and k.revoked_at is null
    group by k.id`;
  return row;
}
