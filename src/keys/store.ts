/**
 * The key store: create, grant, revoke and list API keys. Domain functions on an injected pool; they
 * print nothing (the CLI and the demo decide what to show). Only the SHA-256 hash of a key is stored.
 */
import type { TransactionSql } from 'postgres';
import type { Sql } from '../db/connect.js';
import { begin } from '../db/transaction.js';
import { UUID_SHAPE } from '../domain/uuid.js';
import { UserError } from '../errors.js';
import { generateApiKey, generateKeyId, hashApiKey, looksLikeApiKey } from './format.js';

const KEY_ID_SHAPE = /^key_[0-9a-f]{12}$/;

export interface CreateKeyInput {
  /** Who or what the key is for. */
  name: string;
  /** Tubes the key may read (case-insensitive UUIDs). */
  tubeIdentifiers: string[];
  /** Every tube, including tubes registered later. */
  allTubes: boolean;
}

export interface CreatedKey {
  /** The secret: returned once, never stored. */
  key: string;
  keyId: string;
}

export interface GrantResult {
  /** Tubes newly granted by this call. */
  granted: number;
  /** Tubes the key could already read (granting them again is harmless). */
  alreadyGranted: number;
}

export interface RevokeResult {
  revokedAt: Date;
  /** The key had been revoked before this call; nothing changed. */
  alreadyRevoked: boolean;
}

export interface KeySummary {
  keyId: string;
  name: string;
  createdAt: Date;
  revokedAt: Date | null;
  allTubes: boolean;
  /** Tubes granted one by one (an all-tubes key needs none). */
  grantCount: number;
}

/** A key as `gwapi keys list --json` gives it: what a comparison of two databases needs. */
export interface KeyRecord extends Omit<KeySummary, 'grantCount'> {
  /** The identifiers of the tubes granted one by one, sorted. */
  tubes: string[];
}

/**
 * How a value the operator typed is quoted in an error. A value shaped like an API key (a key pasted
 * where an id belongs) is never echoed: error output may end up in logs and shell history.
 */
function quote(value: string): string {
  return looksLikeApiKey(value) ? '(a value that looks like an API key, not shown)' : JSON.stringify(value);
}

function checkKeyId(keyId: string): void {
  if (!KEY_ID_SHAPE.test(keyId)) {
    throw new UserError(
      `${quote(keyId)} is not a key id: key ids look like key_0123456789ab (see \`gwapi keys list\`)`,
    );
  }
}

/** Tube identifiers → internal tube ids, or one error naming every malformed or unknown identifier. */
async function resolveTubes(sql: TransactionSql, identifiers: string[]): Promise<number[]> {
  const malformed = identifiers.filter((value) => !UUID_SHAPE.test(value));
  if (malformed.length > 0) {
    throw new UserError(`not a tube identifier (expected a UUID): ${malformed.map(quote).join(', ')}`);
  }
  const wanted = [...new Set(identifiers.map((value) => value.toLowerCase()))];
  const rows = await sql<{ id: number; identifier: string }[]>`
    select id, identifier::text from tubes where identifier = any(${wanted}::uuid[])`;
  const found = new Set(rows.map((row) => row.identifier));
  const unknown = wanted.filter((identifier) => !found.has(identifier));
  if (unknown.length > 0) throw new UserError(`unknown tube identifier: ${unknown.join(', ')}`);
  return rows.map((row) => row.id);
}

async function insertGrants(sql: TransactionSql, keyId: string, tubeIds: number[]): Promise<number> {
  if (tubeIds.length === 0) return 0;
  const inserted = await sql`
    insert into api_key_grants (key_id, tube_id)
    select ${keyId}, unnest(${tubeIds}::int[])
    on conflict do nothing
    returning tube_id`;
  return inserted.length;
}

/** Creates a key and its grants in one transaction: an unknown tube leaves nothing behind. */
export async function createKey(sql: Sql, input: CreateKeyInput): Promise<CreatedKey> {
  const name = input.name.trim();
  if (name === '') throw new UserError('a key needs a name (--name)');
  // One line per key in `gwapi keys list`, whatever the name.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new UserError('a key name cannot contain control characters');
  const key = generateApiKey();
  const keyId = generateKeyId();
  await begin(sql, async (tx) => {
    const tubeIds = await resolveTubes(tx, input.tubeIdentifiers);
    await tx`
      insert into api_keys (id, name, key_hash, all_tubes)
      values (${keyId}, ${name}, ${hashApiKey(key)}, ${input.allTubes})`;
    await insertGrants(tx, keyId, tubeIds);
  });
  return { key, keyId };
}

/** Grants more tubes to a live key; all or nothing. */
export async function grantKey(sql: Sql, keyId: string, tubeIdentifiers: string[]): Promise<GrantResult> {
  checkKeyId(keyId);
  if (tubeIdentifiers.length === 0) throw new UserError('name at least one tube to grant (--tube)');
  return begin(sql, async (tx) => {
    // The row lock orders this grant after a concurrent revoke, so a revoked key never gains a tube.
    const [key] = await tx<{ revoked_at: Date | null }[]>`
      select revoked_at from api_keys where id = ${keyId} for update`;
    if (!key) throw new UserError(`unknown key id: ${keyId}`);
    if (key.revoked_at) throw new UserError(`key ${keyId} is revoked; create a new key instead`);
    const tubeIds = await resolveTubes(tx, tubeIdentifiers);
    const granted = await insertGrants(tx, keyId, tubeIds);
    return { granted, alreadyGranted: tubeIds.length - granted };
  });
}

/** Revokes a key. Revoking it again changes nothing and says so. */
export async function revokeKey(sql: Sql, keyId: string): Promise<RevokeResult> {
  checkKeyId(keyId);
  const [revoked] = await sql<{ revoked_at: Date }[]>`
    update api_keys set revoked_at = now() where id = ${keyId} and revoked_at is null returning revoked_at`;
  if (revoked) return { revokedAt: revoked.revoked_at, alreadyRevoked: false };
  const [earlier] = await sql<{ revoked_at: Date }[]>`select revoked_at from api_keys where id = ${keyId}`;
  if (!earlier) throw new UserError(`unknown key id: ${keyId}`);
  return { revokedAt: earlier.revoked_at, alreadyRevoked: true };
}

/** Every key, oldest first, with its grant count. Never a key or a hash. */
export async function listKeys(sql: Sql): Promise<KeySummary[]> {
  const rows = await sql<
    {
      id: string;
      name: string;
      created_at: Date;
      revoked_at: Date | null;
      all_tubes: boolean;
      grant_count: number;
    }[]
  >`
    select k.id, k.name, k.created_at, k.revoked_at, k.all_tubes,
           (select count(*)::int from api_key_grants g where g.key_id = k.id) as grant_count
    from api_keys k
    order by k.created_at, k.id`;
  return rows.map((row) => ({
    keyId: row.id,
    name: row.name,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    allTubes: row.all_tubes,
    grantCount: row.grant_count,
  }));
}

/** Every key, oldest first, with the tubes granted to it. Never a key or a hash. */
export async function listKeyRecords(sql: Sql): Promise<KeyRecord[]> {
  const keys = await listKeys(sql);
  const grants = await sql<{ key_id: string; tubes: string[] }[]>`
    select g.key_id, array_agg(t.identifier::text order by t.identifier::text) as tubes
    from api_key_grants g join tubes t on t.id = g.tube_id
    group by g.key_id`;
  const tubesOf = new Map(grants.map((row) => [row.key_id, row.tubes]));
  return keys.map(({ grantCount: _, ...key }) => ({ ...key, tubes: tubesOf.get(key.keyId) ?? [] }));
}
