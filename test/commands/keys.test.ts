/** `gwapi keys …` as the operator runs it: a real process on a fresh database (DATABASE_URL). */
import { createHash, randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import type { Sql } from '../../src/db/connect.js';
import { type CliResult, runCli } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/database.js';

const KEY = /^gw_[A-Za-z0-9_-]{43}$/;
const KEY_ID = /^key_[0-9a-f]{12}$/;

async function setup(t: Test) {
  const db = await freshDatabase(t);
  const [well] = await db.sql<{ id: number }[]>`insert into wells (name) values ('B32C0123') returning id`;
  const tubes = [randomUUID(), randomUUID()];
  for (const [index, identifier] of tubes.entries()) {
    await db.sql`insert into tubes (identifier, well_id, number) values (${identifier}, ${well!.id}, ${String(index + 1)})`;
  }
  const gwapi = (...args: string[]) => runCli(['keys', ...args], { env: { DATABASE_URL: db.url } });
  return { sql: db.sql, tubes, gwapi };
}

/** Asserts a one-line `gwapi: …` error, exit 1 and no standard output. */
function failsWith(t: Test, result: CliResult, message: string | RegExp) {
  t.equal(result.code, 1, 'exit code 1');
  t.equal(result.stdout, '');
  t.match(result.stderr, /^gwapi: [^\n]*\n$/, 'one line on standard error');
  t.match(result.stderr, message);
}

const grantsOf = (sql: Sql, keyId: string) =>
  sql<{ identifier: string }[]>`
    select t.identifier::text from api_key_grants g join tubes t on t.id = g.tube_id
    where g.key_id = ${keyId} order by 1`.then((rows) => rows.map((r) => r.identifier));

const databaseText = async (sql: Sql) =>
  JSON.stringify([await sql`select * from api_keys`, await sql`select * from api_key_grants`]);

t.test('create prints the key, then the key id; only the hash is stored', async (t) => {
  const { sql, tubes, gwapi } = await setup(t);
  const result = await gwapi('create', '--name', 'province analytics', '--tube', tubes[0]!.toUpperCase());
  t.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split('\n');
  t.equal(lines.length, 3, 'two lines and a final newline');
  const [key, keyId] = lines as [string, string];
  t.match(key, KEY);
  t.match(keyId, KEY_ID);
  t.notMatch(result.stderr, 'warning');
  const [row] = await sql`select name, all_tubes, key_hash from api_keys where id = ${keyId}`;
  t.same(row!.key_hash, createHash('sha256').update(key).digest());
  t.equal(row!.name, 'province analytics');
  t.equal(row!.all_tubes, false);
  t.same(await grantsOf(sql, keyId), [tubes[0]]);
  t.notOk((await databaseText(sql)).includes(key), 'the key is not in the database');
});

t.test('create with several --tube, and with --all-tubes', async (t) => {
  const { sql, tubes, gwapi } = await setup(t);
  const several = await gwapi('create', '--name', 'a', '--tube', tubes[0]!, '--tube', tubes[1]!);
  t.equal(several.code, 0, several.stderr);
  t.same(await grantsOf(sql, several.stdout.split('\n')[1]!), [...tubes].sort());
  const all = await gwapi('create', '--name', 'b', '--all-tubes');
  t.equal(all.code, 0, all.stderr);
  const allId = all.stdout.split('\n')[1]!;
  const [row] = await sql`select all_tubes from api_keys where id = ${allId}`;
  t.equal(row!.all_tubes, true);
  t.notMatch(all.stderr, 'warning');
});

t.test('create without tubes works and warns on standard error', async (t) => {
  const { sql, gwapi } = await setup(t);
  const result = await gwapi('create', '--name', 'later');
  t.equal(result.code, 0, result.stderr);
  const [key, keyId] = result.stdout.split('\n') as [string, string];
  t.match(key, KEY);
  t.match(result.stderr, `warning: ${keyId} may read no tube yet, so the API answers it with 403`);
  t.notOk(result.stderr.includes(key), 'the key is only on standard output');
  t.same(await grantsOf(sql, keyId), []);
});

t.test('create refuses unknown, malformed tubes and a missing name, creating nothing', async (t) => {
  const { sql, tubes, gwapi } = await setup(t);
  const unknown = randomUUID();
  failsWith(
    t,
    await gwapi('create', '--name', 'x', '--tube', tubes[0]!, '--tube', unknown),
    `unknown tube identifier: ${unknown}`,
  );
  failsWith(
    t,
    await gwapi('create', '--name', 'x', '--tube', 'B32C0123-1'),
    'not a tube identifier (expected a UUID): "B32C0123-1"',
  );
  failsWith(t, await gwapi('create', '--name', ''), 'a key needs a name');
  const missing = await gwapi('create', '--all-tubes');
  t.not(missing.code, 0);
  t.match(missing.stderr, "required option '--name <name>' not specified");
  t.equal((await sql`select count(*)::int as n from api_keys`)[0]!.n, 0);
});

t.test(
  'grant adds tubes idempotently and refuses unknown keys, revoked keys and unknown tubes',
  async (t) => {
    const { sql, tubes, gwapi } = await setup(t);
    const keyId = (await gwapi('create', '--name', 'x', '--tube', tubes[0]!)).stdout.split('\n')[1]!;
    const first = await gwapi('grant', keyId, '--tube', tubes[0]!, '--tube', tubes[1]!);
    t.equal(first.code, 0, first.stderr);
    t.equal(first.stdout, `granted ${keyId} 1 more tube (1 tube already granted)\n`);
    const again = await gwapi('grant', keyId, '--tube', tubes[1]!.toUpperCase());
    t.equal(again.code, 0, again.stderr);
    t.equal(again.stdout, `granted ${keyId} 0 more tubes (1 tube already granted)\n`);
    t.same(await grantsOf(sql, keyId), [...tubes].sort());

    failsWith(
      t,
      await gwapi('grant', 'key_000000000000', '--tube', tubes[0]!),
      'unknown key id: key_000000000000',
    );
    const unknown = randomUUID();
    failsWith(t, await gwapi('grant', keyId, '--tube', unknown), `unknown tube identifier: ${unknown}`);
    const noTube = await gwapi('grant', keyId);
    t.not(noTube.code, 0);
    t.match(noTube.stderr, "required option '--tube <uuid...>' not specified");

    await gwapi('revoke', keyId);
    failsWith(t, await gwapi('grant', keyId, '--tube', tubes[0]!), `key ${keyId} is revoked`);
  },
);

t.test('revoke revokes, a second revoke says so and succeeds, an unknown key fails', async (t) => {
  const { sql, gwapi } = await setup(t);
  const keyId = (await gwapi('create', '--name', 'x', '--all-tubes')).stdout.split('\n')[1]!;
  const first = await gwapi('revoke', keyId);
  t.equal(first.code, 0, first.stderr);
  t.equal(first.stdout, `revoked ${keyId}: every replica refuses it within 10 seconds\n`);
  const [row] = await sql`select revoked_at from api_keys where id = ${keyId}`;
  t.type(row!.revoked_at, Date);
  const second = await gwapi('revoke', keyId);
  t.equal(second.code, 0, second.stderr);
  t.equal(second.stdout, `${keyId} was already revoked at ${row!.revoked_at.toISOString().slice(0, 19)}Z\n`);
  failsWith(t, await gwapi('revoke', 'key_ffffffffffff'), 'unknown key id: key_ffffffffffff');
});

t.test('a key given where a key id belongs is refused without echoing it', async (t) => {
  const { gwapi, tubes } = await setup(t);
  const key = (await gwapi('create', '--name', 'x', '--all-tubes')).stdout.split('\n')[0]!;
  for (const result of [await gwapi('revoke', key), await gwapi('grant', key, '--tube', tubes[0]!)]) {
    failsWith(t, result, 'is not a key id');
    t.notOk(result.stderr.includes(key));
  }
});

t.test('list shows id, name, created, revoked and grants, never a key or hash', async (t) => {
  const { sql, tubes, gwapi } = await setup(t);
  const empty = await gwapi('list');
  t.equal(empty.code, 0, empty.stderr);
  t.equal(empty.stdout, 'ID  NAME  CREATED  REVOKED  GRANTS\n');

  const created = [
    await gwapi('create', '--name', 'two tubes', '--tube', tubes[0]!, '--tube', tubes[1]!),
    await gwapi('create', '--name', 'everything', '--all-tubes'),
    await gwapi('create', '--name', 'nothing yet'),
  ].map((r) => r.stdout.split('\n') as [string, string]);
  await gwapi('revoke', created[2]![1]);
  const result = await gwapi('list');
  t.equal(result.code, 0, result.stderr);
  const rows = await sql<{ id: string; created_at: Date; revoked_at: Date | null }[]>`
    select id, created_at, revoked_at from api_keys order by created_at, id`;
  const time = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;
  const expected = [
    ['ID', 'NAME', 'CREATED', 'REVOKED', 'GRANTS'],
    ...rows.map((row) => {
      const index = created.findIndex(([, id]) => id === row.id);
      const name = ['two tubes', 'everything', 'nothing yet'][index]!;
      const grants = ['2', 'all', '0'][index]!;
      return [row.id, name, time(row.created_at), row.revoked_at ? time(row.revoked_at) : '-', grants];
    }),
  ];
  const lines = result.stdout.trimEnd().split('\n');
  t.equal(lines.length, 4);
  // Columns are aligned: each starts at the same offset on every line.
  for (const [index, line] of lines.entries()) {
    const cells = expected[index]!;
    let offset = 0;
    for (const [column, cell] of cells.entries()) {
      const start = lines[0]!.indexOf(expected[0]![column]!);
      t.equal(line.indexOf(cell, offset), start, `line ${index} column ${column}`);
      offset = start + cell.length;
    }
  }
  const hashes = await sql<{ hex: string }[]>`select encode(key_hash, 'hex') as hex from api_keys`;
  for (const [key] of created) t.notOk(result.stdout.includes(key), 'no key in the list');
  for (const { hex } of hashes) t.notOk(result.stdout.toLowerCase().includes(hex), 'no hash in the list');
});

t.test('list --json: a line per key with its tubes, so two lists compare line by line', async (t) => {
  const { sql, tubes, gwapi } = await setup(t);
  const empty = await gwapi('list', '--json');
  t.equal(empty.code, 0, empty.stderr);
  t.equal(empty.stdout, '', 'no key, no line');

  const [one, all, other] = [
    await gwapi('create', '--name', 'one tube', '--tube', tubes[0]!),
    await gwapi('create', '--name', 'everything', '--all-tubes'),
    await gwapi('create', '--name', 'kept as is', '--tube', tubes[1]!),
  ].map((r) => r.stdout.split('\n') as [string, string]);
  const before = await gwapi('list', '--json');
  t.equal(before.code, 0, before.stderr);
  await gwapi('grant', one![1], '--tube', tubes[1]!);
  await gwapi('revoke', all![1]);
  const after = await gwapi('list', '--json');
  const rows = await sql<{ id: string; created_at: Date; revoked_at: Date | null }[]>`
    select id, created_at, revoked_at from api_keys order by created_at, id`;
  const records = after.stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.same(
    records,
    rows.map((row) => ({
      keyId: row.id,
      name: { [one![1]]: 'one tube', [all![1]]: 'everything', [other![1]]: 'kept as is' }[row.id],
      createdAt: row.created_at.toISOString(),
      revokedAt: row.revoked_at?.toISOString() ?? null,
      allTubes: row.id === all![1],
      tubes: row.id === one![1] ? [...tubes].sort() : row.id === other![1] ? [tubes[1]] : [],
    })),
  );
  const beforeLines = before.stdout.split('\n');
  const changed = after.stdout.split('\n').filter((line) => !beforeLines.includes(line));
  t.same(
    changed.map((line) => JSON.parse(line).keyId).sort(),
    [one![1], all![1]].sort(),
    'the granted and the revoked key, and no other, differ',
  );
  const hashes = await sql<{ hex: string }[]>`select encode(key_hash, 'hex') as hex from api_keys`;
  for (const [key] of [one!, all!, other!]) t.notOk(after.stdout.includes(key), 'no key in the list');
  for (const { hex } of hashes) t.notOk(after.stdout.toLowerCase().includes(hex), 'no hash in the list');
});

t.test('a bad setting is one line and exit 2', async (t) => {
  const result = await runCli(['keys', 'list'], { env: { DATABASE_URL: 'mysql://x' } });
  t.equal(result.code, 2);
  t.equal(
    result.stderr,
    'gwapi: invalid setting DATABASE_URL: expected a URL starting with postgres:// or postgresql://\n',
  );
});

t.test('a database without the schema is refused with a hint, not an SQL error', async (t) => {
  const { url, sql } = await freshDatabase(t, { migrated: false });
  const result = await runCli(['keys', 'list'], { env: { DATABASE_URL: url } });
  failsWith(t, result, 'gwapi: the database schema is not up to date: run `gwapi migrate` first');
  const [tables] = await sql`select count(*)::int as n from pg_tables where schemaname = 'public'`;
  t.equal(tables!.n, 0, 'and it is not migrated behind the operator’s back');
});
