import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { UserError } from '../../src/errors.js';
import { hashApiKey } from '../../src/keys/format.js';
import { createKey, grantKey, listKeys, revokeKey } from '../../src/keys/store.js';
import { freshDatabase } from '../helpers/database.js';

/** A well with `count` tubes; returns their identifiers. */
async function registerTubes(sql: Sql, count: number): Promise<string[]> {
  const [well] = await sql<{ id: number }[]>`insert into wells (name) values (${randomUUID()}) returning id`;
  const identifiers = Array.from({ length: count }, () => randomUUID());
  for (const [index, identifier] of identifiers.entries()) {
    await sql`insert into tubes (identifier, well_id, number) values (${identifier}, ${well!.id}, ${String(index + 1)})`;
  }
  return identifiers;
}

const grantedTubes = (sql: Sql, keyId: string) =>
  sql<{ identifier: string }[]>`
    select t.identifier::text from api_key_grants g join tubes t on t.id = g.tube_id
    where g.key_id = ${keyId} order by 1`.then((rows) => rows.map((r) => r.identifier));

const keyCount = (sql: Sql) => sql`select count(*)::int as n from api_keys`.then(([r]) => r!.n as number);

t.test('createKey stores only the SHA-256 hash and the grants', async (t) => {
  const { sql } = await freshDatabase(t);
  const tubes = await registerTubes(sql, 3);
  const { key, keyId } = await createKey(sql, {
    name: 'Waterschap',
    tubeIdentifiers: tubes.slice(0, 2),
    allTubes: false,
  });
  t.match(key, /^gw_[A-Za-z0-9_-]{43}$/);
  t.match(keyId, /^key_[0-9a-f]{12}$/);
  const [row] = await sql`select * from api_keys where id = ${keyId}`;
  t.same(row!.key_hash, hashApiKey(key));
  t.equal(row!.name, 'Waterschap');
  t.equal(row!.all_tubes, false);
  t.equal(row!.revoked_at, null);
  t.same(await grantedTubes(sql, keyId), tubes.slice(0, 2).sort());
  const dump =
    JSON.stringify(await sql`select * from api_keys`) +
    JSON.stringify(await sql`select * from api_key_grants`);
  t.notOk(dump.includes(key), 'the key itself is nowhere in the database');
});

t.test('two keys are different', async (t) => {
  const { sql } = await freshDatabase(t);
  const a = await createKey(sql, { name: 'a', tubeIdentifiers: [], allTubes: true });
  const b = await createKey(sql, { name: 'b', tubeIdentifiers: [], allTubes: true });
  t.not(a.key, b.key);
  t.not(a.keyId, b.keyId);
});

t.test('tube identifiers compare case-insensitively and duplicates collapse', async (t) => {
  const { sql } = await freshDatabase(t);
  const [tube] = await registerTubes(sql, 1);
  const { keyId } = await createKey(sql, {
    name: 'x',
    tubeIdentifiers: [tube!.toUpperCase(), tube!],
    allTubes: false,
  });
  t.same(await grantedTubes(sql, keyId), [tube]);
});

t.test('an unknown or malformed tube creates nothing and is named', async (t) => {
  const { sql } = await freshDatabase(t);
  const [tube] = await registerTubes(sql, 1);
  const unknown = randomUUID();
  await t.rejects(
    createKey(sql, { name: 'x', tubeIdentifiers: [tube!, unknown.toUpperCase()], allTubes: false }),
    new UserError(`unknown tube identifier: ${unknown}`),
  );
  await t.rejects(
    createKey(sql, { name: 'x', tubeIdentifiers: [tube!, 'not-a-uuid'], allTubes: false }),
    new UserError('not a tube identifier (expected a UUID): "not-a-uuid"'),
  );
  t.equal(await keyCount(sql), 0);
  t.equal((await sql`select count(*)::int as n from api_key_grants`)[0]!.n, 0);
});

t.test('a key pasted where a tube or key id belongs is not echoed', async (t) => {
  const { sql } = await freshDatabase(t);
  const { key } = await createKey(sql, { name: 'x', tubeIdentifiers: [], allTubes: true });
  const errors = await Promise.all([
    createKey(sql, { name: 'y', tubeIdentifiers: [key], allTubes: false }).catch((e: Error) => e),
    grantKey(sql, key, [randomUUID()]).catch((e: Error) => e),
    revokeKey(sql, key).catch((e: Error) => e),
  ]);
  for (const error of errors) {
    t.type(error, UserError);
    t.notOk((error as Error).message.includes(key), (error as Error).message);
  }
});

t.test('an empty name is refused', async (t) => {
  const { sql } = await freshDatabase(t);
  await t.rejects(createKey(sql, { name: '  ', tubeIdentifiers: [], allTubes: true }), UserError);
  t.equal(await keyCount(sql), 0);
});

t.test('--all-tubes and no tubes at all are both stored as such', async (t) => {
  const { sql } = await freshDatabase(t);
  const all = await createKey(sql, { name: 'all', tubeIdentifiers: [], allTubes: true });
  const none = await createKey(sql, { name: 'none', tubeIdentifiers: [], allTubes: false });
  const rows = await sql`select id, all_tubes from api_keys order by name`;
  t.same(
    rows.map((r) => [r.id, r.all_tubes]),
    [
      [all.keyId, true],
      [none.keyId, false],
    ],
  );
  t.same(await grantedTubes(sql, none.keyId), []);
});

t.test('grantKey adds tubes, idempotently, all or nothing', async (t) => {
  const { sql } = await freshDatabase(t);
  const tubes = await registerTubes(sql, 3);
  const { keyId } = await createKey(sql, { name: 'x', tubeIdentifiers: [tubes[0]!], allTubes: false });
  t.same(await grantKey(sql, keyId, [tubes[0]!, tubes[1]!.toUpperCase()]), { granted: 1, alreadyGranted: 1 });
  t.same(await grantKey(sql, keyId, [tubes[1]!]), { granted: 0, alreadyGranted: 1 });
  const unknown = randomUUID();
  await t.rejects(
    grantKey(sql, keyId, [tubes[2]!, unknown]),
    new UserError(`unknown tube identifier: ${unknown}`),
  );
  t.same(
    await grantedTubes(sql, keyId),
    tubes.slice(0, 2).sort(),
    'the known tube of a failed grant is not granted',
  );
  await t.rejects(grantKey(sql, keyId, []), UserError);
});

t.test('grantKey refuses unknown and revoked keys', async (t) => {
  const { sql } = await freshDatabase(t);
  const [tube] = await registerTubes(sql, 1);
  await t.rejects(
    grantKey(sql, 'key_000000000000', [tube!]),
    new UserError('unknown key id: key_000000000000'),
  );
  await t.rejects(grantKey(sql, 'nonsense', [tube!]), /"nonsense" is not a key id/);
  const { keyId } = await createKey(sql, { name: 'x', tubeIdentifiers: [], allTubes: false });
  await revokeKey(sql, keyId);
  await t.rejects(
    grantKey(sql, keyId, [tube!]),
    new UserError(`key ${keyId} is revoked; create a new key instead`),
  );
  t.same(await grantedTubes(sql, keyId), []);
});

t.test('revokeKey revokes once, then says it already was', async (t) => {
  const { sql } = await freshDatabase(t);
  const { keyId } = await createKey(sql, { name: 'x', tubeIdentifiers: [], allTubes: true });
  const first = await revokeKey(sql, keyId);
  t.equal(first.alreadyRevoked, false);
  const second = await revokeKey(sql, keyId);
  t.equal(second.alreadyRevoked, true);
  t.same(second.revokedAt, first.revokedAt, 'the first revocation time is kept');
  await t.rejects(revokeKey(sql, 'key_ffffffffffff'), new UserError('unknown key id: key_ffffffffffff'));
});

t.test('listKeys shows ids, names, times and grant counts, oldest first', async (t) => {
  const { sql } = await freshDatabase(t);
  t.same(await listKeys(sql), []);
  const tubes = await registerTubes(sql, 2);
  const a = await createKey(sql, { name: 'a', tubeIdentifiers: tubes, allTubes: false });
  const b = await createKey(sql, { name: 'b', tubeIdentifiers: [], allTubes: true });
  await revokeKey(sql, a.keyId);
  const list = await listKeys(sql);
  t.same(
    list.map((k) => [k.keyId, k.name, k.allTubes, k.grantCount, k.revokedAt instanceof Date]),
    [
      [a.keyId, 'a', false, 2, true],
      [b.keyId, 'b', true, 0, false],
    ],
  );
  t.ok(list.every((k) => k.createdAt instanceof Date));
  t.notOk(JSON.stringify(list).includes(a.key) || JSON.stringify(list).includes(b.key));
});
