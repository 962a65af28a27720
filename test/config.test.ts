import t from 'tap';
import { bulkConnections, loadSettings, SettingsError } from '../src/config.js';
import { runCli } from './helpers/cli.js';

t.test('defaults apply when nothing is set', async (t) => {
  const s = loadSettings({});
  t.equal(s.DATABASE_URL, undefined);
  t.equal(s.REDIS_URL, undefined);
  t.equal(s.HOST, '127.0.0.1');
  t.equal(s.PORT, 3000);
  t.equal(s.LOG_LEVEL, 'info');
  t.equal(s.RATE_LIMIT_BURST, 60);
  t.equal(s.RATE_LIMIT_PER_SECOND, 0.5);
  t.equal(s.CONCURRENCY_LIMIT, 2);
  t.equal(s.KEY_CACHE_SECONDS, 5);
  t.equal(s.LIMITS_ENABLED, true);
  t.equal(s.DATABASE_WAIT_SECONDS, 5);
});

t.test('valid values are parsed to their types', async (t) => {
  const s = loadSettings({
    DATABASE_URL: 'postgres://u:p@db:5432/gw',
    REDIS_URL: 'redis://cache:6379',
    PORT: '8080',
    RATE_LIMIT_PER_SECOND: '2.5',
    LIMITS_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    DATABASE_WAIT_SECONDS: '0.5',
    REDIS_SENTINELS: 'sentinel-1:26379, 10.0.0.7:26380',
  });
  t.equal(s.DATABASE_URL, 'postgres://u:p@db:5432/gw');
  t.equal(s.PORT, 8080);
  t.equal(s.RATE_LIMIT_PER_SECOND, 2.5);
  t.equal(s.LIMITS_ENABLED, false);
  t.equal(s.LOG_LEVEL, 'warn');
  t.equal(s.DATABASE_WAIT_SECONDS, 0.5);
  t.same(s.REDIS_SENTINELS, [
    { host: 'sentinel-1', port: 26379 },
    { host: '10.0.0.7', port: 26380 },
  ]);
  t.equal(s.REDIS_SENTINEL_NAME, 'mymaster');
});

t.test('BULK_CONNECTIONS: a fifth of the pool unless set, at least 1', async (t) => {
  t.equal(bulkConnections(loadSettings({})), 2);
  t.equal(bulkConnections(loadSettings({ DATABASE_POOL_MAX: '40' })), 8);
  t.equal(bulkConnections(loadSettings({ DATABASE_POOL_MAX: '3' })), 1);
  t.equal(bulkConnections(loadSettings({ DATABASE_POOL_MAX: '1' })), 1);
  t.equal(bulkConnections(loadSettings({ DATABASE_POOL_MAX: '20', BULK_CONNECTIONS: '20' })), 20);
});

t.test('an empty variable counts as unset', async (t) => {
  t.equal(loadSettings({ PORT: '', DATABASE_URL: '' }).PORT, 3000);
});

const bad: [string, string, RegExp][] = [
  ['PORT', 'abc', /^invalid setting PORT: expected a whole number from 0 to 65535 \(got "abc"\)$/],
  ['PORT', '70000', /^invalid setting PORT: expected at most 65535/],
  ['LOG_LEVEL', 'loud', /^invalid setting LOG_LEVEL: /],
  ['RATE_LIMIT_PER_SECOND', '-1', /^invalid setting RATE_LIMIT_PER_SECOND: expected a positive number/],
  ['CONCURRENCY_LIMIT', '0', /^invalid setting CONCURRENCY_LIMIT: expected at least 1/],
  ['DATABASE_WAIT_SECONDS', '0', /^invalid setting DATABASE_WAIT_SECONDS: expected a positive number/],
  ['DATABASE_WAIT_SECONDS', '601', /^invalid setting DATABASE_WAIT_SECONDS: expected at most 600/],
  [
    'BULK_CONNECTIONS',
    '11',
    /^invalid setting BULK_CONNECTIONS: expected at most DATABASE_POOL_MAX \(10\) \(got 11\)$/,
  ],
  ['BULK_CONNECTIONS', '0', /^invalid setting BULK_CONNECTIONS: expected at least 1/],
  [
    'REDIS_SENTINELS',
    'sentinel-1',
    /^invalid setting REDIS_SENTINELS: expected host:port pairs separated by commas/,
  ],
  ['REDIS_SENTINELS', 'a:1,b:99999', /^invalid setting REDIS_SENTINELS: expected host:port pairs/],
  ['LIMITS_ENABLED', 'maybe', /^invalid setting LIMITS_ENABLED: expected true or false/],
  [
    'REDIS_URL',
    'http://cache',
    /^invalid setting REDIS_URL: expected a URL starting with redis:\/\/ or rediss:\/\/$/,
  ],
];
for (const [name, value, message] of bad) {
  t.test(`${name}=${value} is refused with one line naming it`, async (t) => {
    const error = t.throws(() => loadSettings({ [name]: value })) as SettingsError;
    t.type(error, SettingsError);
    t.equal(error.variable, name);
    t.match(error.message, message);
    t.notMatch(error.message, /\n/);
  });
}

t.test('a bad DATABASE_URL is named but its value (which may hold a password) is not echoed', async (t) => {
  const error = t.throws(() => loadSettings({ DATABASE_URL: 'mysql://root:hunter2@db/gw' })) as Error;
  t.match(error.message, /^invalid setting DATABASE_URL: expected a URL starting with postgres:\/\//);
  t.notMatch(error.message, /hunter2/);
});

t.test('the CLI fails at start with one line and a non-zero exit', async (t) => {
  const result = await runCli(['migrate'], { env: { PORT: 'abc' } });
  t.equal(result.code, 2);
  t.equal(result.stdout, '');
  t.equal(
    result.stderr,
    'gwapi: invalid setting PORT: expected a whole number from 0 to 65535 (got "abc")\n',
  );
});
