/**
 * A database or Redis that cannot be reached or entered: every command that connects says which
 * setting points where, what failed and what to check, in two lines, and never shows the password.
 * Real failures: a closed port, a host name that cannot resolve, a wrong password, a missing database,
 * TLS against a server without it.
 */
import { createServer } from 'node:net';
import t, { type Test } from 'tap';
import { logged } from '../../testkit/gwapi.js';
import { runCli } from '../helpers/cli.js';
import { freshDatabase, testDatabaseUrl } from '../helpers/database.js';
import { startReplica } from '../helpers/serve.js';

const PASSWORD = 'n0t-to-be-5hown';

/** A port nothing listens on: taken from the kernel, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The test PostgreSQL's URL with `change` applied (a wrong password, another database…). */
function testServerUrl(change: (url: URL) => void): string {
  const url = new URL(testDatabaseUrl());
  change(url);
  return url.href;
}

/** Runs `args` with DATABASE_URL=`url`; checks the two lines and exit code, returns them. */
async function refused(t: Test, args: string[], url: string, secret: string): Promise<[string, string]> {
  const result = await runCli(args, { env: { DATABASE_URL: url, PORT: '0' }, input: '' });
  t.equal(result.code, 1, `${args.join(' ')}: exit code 1`);
  t.notMatch(result.stderr, secret, `${args.join(' ')}: the password is not shown`);
  t.notMatch(result.stderr, /unexpected error/);
  const lines = result.stderr.trimEnd().split('\n');
  t.equal(lines.length, 2, `${args.join(' ')}: two lines\n${result.stderr}`);
  return [lines[0]!, lines[1]!];
}

const COMMANDS = [
  ['migrate'],
  ['keys', 'list'],
  ['keys', 'create', '--name', 'x', '--all-tubes'],
  ['keys', 'revoke', 'key_0123456789ab'],
  ['import', 'registry', 'registry.json'],
  ['import', 'measurements', '-'],
  ['serve'],
  ['demo'],
];

t.test('a closed port, for every command that connects', async (t) => {
  const port = await closedPort();
  const url = `postgres://gwapi:${PASSWORD}@127.0.0.1:${port}/groundwater`;
  for (const args of COMMANDS) {
    const [what, check] = await refused(t, args, url, PASSWORD);
    t.equal(
      what,
      `gwapi: cannot connect to PostgreSQL at 127.0.0.1:${port} (DATABASE_URL, database "groundwater"): ` +
        'connection refused.',
    );
    t.equal(check, `  Is PostgreSQL running and listening on 127.0.0.1:${port}?`);
  }
});

t.test('several hosts, none of them a primary', async (t) => {
  const [first, second] = [await closedPort(), await closedPort()];
  const hosts = `127.0.0.1:${first},127.0.0.1:${second}`;
  const url = `postgres://gwapi:${PASSWORD}@${hosts}/groundwater?target_session_attrs=read-write`;
  const [what, check] = await refused(t, ['keys', 'list'], url, PASSWORD);
  t.equal(
    what,
    `gwapi: cannot connect to PostgreSQL at ${hosts} (DATABASE_URL, database "groundwater"): no host is ` +
      `read-write: 127.0.0.1:${first} not answering (connect ECONNREFUSED 127.0.0.1:${first}), ` +
      `127.0.0.1:${second} not answering (connect ECONNREFUSED 127.0.0.1:${second}).`,
  );
  t.equal(
    check,
    '  Is PostgreSQL running on the hosts in DATABASE_URL, and one of them the primary (is a standby being promoted)?',
  );
});

t.test('a host name that does not resolve', async (t) => {
  const [what, check] = await refused(
    t,
    ['migrate'],
    `postgres://gwapi:${PASSWORD}@nowhere.invalid/gw`,
    PASSWORD,
  );
  // Not found, or no answer where the machine has no DNS at all: both name the host.
  t.match(
    what,
    /^gwapi: cannot connect to PostgreSQL at nowhere\.invalid:5432 \(DATABASE_URL, database "gw"\): host name "nowhere\.invalid" (not found|could not be looked up)/,
  );
  t.match(check, /^ {2}Is the host name in DATABASE_URL right/);
});

t.test('a wrong password', async (t) => {
  const url = testServerUrl((u) => {
    u.password = PASSWORD;
  });
  const { hostname, port, username } = new URL(url);
  const [what, check] = await refused(t, ['keys', 'list'], url, PASSWORD);
  t.equal(
    what,
    `gwapi: cannot connect to PostgreSQL at ${hostname}:${port} (DATABASE_URL, database "postgres"): ` +
      `password authentication failed for user "${username}".`,
  );
  t.equal(check, '  Check the user and password in DATABASE_URL.');
});

t.test('a database that does not exist', async (t) => {
  const right = new URL(testDatabaseUrl()).password;
  const url = testServerUrl((u) => {
    u.pathname = '/no_such_database';
  });
  const [what, check] = await refused(t, ['migrate'], url, right);
  t.match(
    what,
    /\(DATABASE_URL, database "no_such_database"\): database "no_such_database" does not exist\.$/,
  );
  t.equal(
    check,
    '  Create it (createdb no_such_database) or correct DATABASE_URL, then run `gwapi migrate`.',
  );
});

t.test('TLS required from a server without it', async (t) => {
  const right = new URL(testDatabaseUrl()).password;
  const url = testServerUrl((u) => {
    u.searchParams.set('sslmode', 'require');
  });
  const { hostname, port } = new URL(url);
  const [what, check] = await refused(t, ['keys', 'list'], url, right);
  t.match(what, `at ${hostname}:${port} (DATABASE_URL, database "postgres"): TLS failed (`);
  t.equal(
    check,
    `  Does ${hostname}:${port} speak TLS, with a certificate valid for "${hostname}"? Check sslmode in DATABASE_URL.`,
  );
});

t.test('Redis: gwapi serve starts, limiting on its own, and says which setting points where', async (t) => {
  const db = await freshDatabase(t);
  const port = await closedPort();
  const cases = [
    [
      `redis://gwapi:${PASSWORD}@127.0.0.1:${port}`,
      `at 127.0.0.1:${port} (REDIS_URL): connection refused. Is Redis running and listening on 127.0.0.1:${port}?`,
    ],
    [
      `redis://:${PASSWORD}@nowhere.invalid:6379`,
      'at nowhere.invalid:6379 (REDIS_URL): host name "nowhere.invalid"',
    ],
  ];
  for (const [redisUrl, expected] of cases) {
    const replica = await startReplica(t, { DATABASE_URL: db.url, REDIS_URL: redisUrl });
    await replica.stop();
    const [line] = logged(replica, /Redis is unavailable/);
    t.match(line?.msg, `limits: Redis is unavailable (cannot connect to Redis ${expected}`);
    t.notMatch(JSON.stringify(replica.logs), PASSWORD, 'the password is not logged');
  }
});
