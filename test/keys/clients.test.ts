/**
 * createClientResolver against a real PostgreSQL: a key the cache knows is answered at once (no promise,
 * so the request hook takes no extra turn), anything else through one shared database lookup.
 */
import t from 'tap';
import { createClientResolver } from '../../src/keys/clients.js';
import { generateApiKey } from '../../src/keys/format.js';
import { addKey, revokeKey } from '../../testkit/fixtures.js';
import { freshDatabase } from '../helpers/database.js';

t.test('createClientResolver', async (t) => {
  const db = await freshDatabase(t);
  const { key, keyId } = await addKey(db.sql, { allTubes: true });
  let lookups = 0;
  const resolver = createClientResolver(db.sql, {
    cacheSeconds: 10,
    onLookup: (hit) => {
      if (!hit) lookups++;
    },
  });

  t.test('a known key: a promise the first time, the client itself while cached', async (t) => {
    const first = resolver.resolve(key);
    t.ok(first instanceof Promise, 'the first lookup asks the database');
    const client = await first;
    t.equal(client?.keyId, keyId);
    const second = resolver.resolve(key);
    t.notOk(second instanceof Promise, 'a cached key is answered at once');
    t.equal(second, client, 'the same client');
    t.equal(lookups, 1, 'one database lookup');
  });

  t.test('concurrent first lookups of one key share one query', async (t) => {
    const other = await addKey(db.sql, { tubeIds: [] });
    const before = lookups;
    const answers = [resolver.resolve(other.key), resolver.resolve(other.key)];
    t.ok(
      answers.every((answer) => answer instanceof Promise),
      'both wait for the lookup',
    );
    const [a, b] = await Promise.all(answers);
    t.equal(a?.keyId, other.keyId);
    t.equal(a, b, 'the same client');
    t.equal(lookups - before, 1, 'one database lookup');
  });

  t.test('an unknown key: undefined, and at once while remembered', async (t) => {
    const unknown = generateApiKey();
    const first = resolver.resolve(unknown);
    t.ok(first instanceof Promise);
    t.equal(await first, undefined);
    t.equal(resolver.resolve(unknown), undefined, 'remembered for a moment, answered at once');
  });

  t.test('a malformed key: undefined at once, without a lookup', async (t) => {
    const before = lookups;
    t.equal(resolver.resolve('not-a-key'), undefined);
    t.equal(lookups, before);
  });

  t.test('with no cache every lookup asks the database', async (t) => {
    const uncached = createClientResolver(db.sql, { cacheSeconds: 0 });
    for (let i = 0; i < 2; i++) {
      const answer = uncached.resolve(key);
      t.ok(answer instanceof Promise);
      t.equal((await answer)?.keyId, keyId);
    }
  });

  t.test('a revoked key stops resolving once its cache entry expires', async (t) => {
    const shortLived = createClientResolver(db.sql, { cacheSeconds: 0.2 });
    const revoked = await addKey(db.sql, { allTubes: true });
    t.equal((await shortLived.resolve(revoked.key))?.keyId, revoked.keyId);
    await revokeKey(db.sql, revoked.keyId);
    t.equal((await shortLived.resolve(revoked.key))?.keyId, revoked.keyId, 'still cached');
    await new Promise((resolve) => setTimeout(resolve, 250));
    t.equal(await shortLived.resolve(revoked.key), undefined, 'gone after the cache time');
  });
});
