/**
 * The role probe and libpq's `target_session_attrs` rules (src/db/role.ts), shared by the connection's
 * host choice and the read replicas' monitor: the rules as libpq-connect states them, and the probe
 * against a real server (a primary, then one whose sessions are read-only by default).
 */
import postgres from 'postgres';
import t from 'tap';
import { TARGET_SESSION_ATTRS } from '../../src/db/postgresUrl.js';
import { acceptedHosts, acceptsSession, probeRole, type Role } from '../../src/db/role.js';
import { testDatabaseUrl } from '../helpers/database.js';

const PRIMARY: Role = { inRecovery: false, readOnly: false };
const READ_ONLY_PRIMARY: Role = { inRecovery: false, readOnly: true };
const STANDBY: Role = { inRecovery: true, readOnly: true };

t.test('libpq accepts, per setting: primary, read-only primary, standby', async (t) => {
  const accepted = Object.fromEntries(
    TARGET_SESSION_ATTRS.map((attrs) => [
      attrs,
      [PRIMARY, READ_ONLY_PRIMARY, STANDBY].map((role) => acceptsSession(attrs, role)),
    ]),
  );
  t.same(accepted, {
    any: [true, true, true],
    'read-write': [true, false, false],
    'read-only': [false, true, true],
    primary: [true, true, false],
    standby: [false, false, true],
    'prefer-standby': [false, false, true],
  });
});

t.test('across hosts: the silent never, prefer-standby a primary only with no standby', async (t) => {
  t.same(acceptedHosts('any', [PRIMARY, undefined, STANDBY]), [true, false, true]);
  t.same(acceptedHosts('prefer-standby', [PRIMARY, undefined, STANDBY]), [false, false, true]);
  t.same(acceptedHosts('prefer-standby', [PRIMARY, undefined, READ_ONLY_PRIMARY]), [true, false, true]);
  t.same(
    acceptedHosts('prefer-standby', [PRIMARY, STANDBY], (index) => index !== 1),
    [true, true],
    'a standby that does not serve (lagging) leaves the primary in, and is itself still a standby',
  );
  t.same(
    acceptedHosts('standby', [PRIMARY, STANDBY], () => false),
    [false, true],
    'only prefer-standby asks',
  );
});

t.test('the probe, with more columns in the same statement', async (t) => {
  const url = testDatabaseUrl();
  const primary = postgres(url, { max: 1, onnotice: () => {} });
  const readOnly = postgres(url, { max: 1, connection: { default_transaction_read_only: true } });
  t.teardown(() => Promise.all([primary.end(), readOnly.end()]));
  t.same(await probeRole(primary), PRIMARY);
  t.same(await probeRole(readOnly), READ_ONLY_PRIMARY);
  t.same(await probeRole<{ answer: number }>(primary, primary`42 as answer`), { ...PRIMARY, answer: 42 });
});
