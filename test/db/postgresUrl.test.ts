/**
 * libpq's URL form with several hosts (src/db/postgresUrl.ts): what each host is, the URL of one host
 * (what postgres.js is given), and the settings' refusals of what libpq would refuse.
 */
import t from 'tap';
import { loadSettings } from '../../src/config.js';
import { hostUrl, parsePostgresUrl, withoutHostChoice } from '../../src/db/postgresUrl.js';

const MULTI = 'postgres://reader:s%40cret@db1:5433,db2,[::1]:6000/groundwater?sslmode=disable';

t.test('hosts, ports and the first host’s URL', async (t) => {
  const parsed = parsePostgresUrl(MULTI);
  t.same(parsed.hosts, [
    { host: 'db1', port: 5433 },
    { host: 'db2', port: 5432 },
    { host: '[::1]', port: 6000 },
  ]);
  t.equal(parsed.first.toString(), 'postgres://reader:s%40cret@db1:5433/groundwater?sslmode=disable');
  t.equal(parsed.targetSessionAttrs, undefined);
  t.equal(parsed.loadBalanceHosts, undefined);
  t.same(parsePostgresUrl('postgresql://u@h/db').hosts, [{ host: 'h', port: 5432 }]);
});

t.test('one host’s URL keeps credentials and parameters, not the ones that choose hosts', async (t) => {
  const url = `${MULTI}&target_session_attrs=standby&load_balance_hosts=random`;
  t.equal(hostUrl(url, 1), 'postgres://reader:s%40cret@db2:5432/groundwater?sslmode=disable');
  t.throws(() => hostUrl(url, 3), RangeError);
});

t.test('a URL without the parameters that choose hosts keeps the rest as written', async (t) => {
  t.equal(withoutHostChoice(MULTI), MULTI);
  t.equal(
    withoutHostChoice('postgres://u@h/db?load_balance_hosts=random&sslmode=require&target_session_attrs=any'),
    'postgres://u@h/db?sslmode=require',
  );
  t.equal(withoutHostChoice('postgres://u@h/db?target_session_attrs=any'), 'postgres://u@h/db');
});

t.test('DATABASE_URL and DATABASE_READ_URL take several hosts and refuse what libpq refuses', async (t) => {
  const settings = loadSettings({
    DATABASE_URL: 'postgres://u:p@a:5432,b:5432/db?target_session_attrs=read-write',
    DATABASE_READ_URL: 'postgres://u:p@b:5432,c:5432/db?load_balance_hosts=random',
  });
  t.match(settings.DATABASE_READ_URL, /b:5432,c:5432/);
  for (const [value, message] of [
    ['postgres://u:p@a,b/db?load_balance_hosts=sometimes', /load_balance_hosts to be one of disable, random/],
    ['postgres://u:p@a,b/db?target_session_attrs=leader', /target_session_attrs to be one of/],
    ['postgres://u:p@a:99999,b/db', /ports from 1 to 65535/],
    ['mysql://u:p@a/db', /postgres:\/\//],
  ] as const) {
    t.throws(
      () => loadSettings({ DATABASE_READ_URL: value, DATABASE_URL: 'postgres://a/db' }),
      message,
      value,
    );
    const error = (() => {
      try {
        loadSettings({ DATABASE_READ_URL: value, DATABASE_URL: 'postgres://a/db' });
      } catch (caught) {
        return String(caught);
      }
    })();
    t.notMatch(error, /u:p@/, 'the password is never echoed');
  }
});
