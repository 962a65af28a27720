/** The limit settings: defaults from the contract, parsing, and their units for the stores. */
import t from 'tap';
import { loadSettings, type SettingsError } from '../../src/config.js';
import { limitParameters, retryAfterSeconds } from '../../src/limits/parameters.js';

t.test('defaults are the contract numbers', async (t) => {
  const settings = loadSettings({});
  t.equal(settings.CONCURRENCY_LEASE_SECONDS, 10);
  t.equal(settings.FAILED_AUTH_LIMIT, 10);
  t.equal(settings.FAILED_AUTH_WINDOW_SECONDS, 60);
  t.equal(settings.TRUST_PROXY, false);
  t.equal(settings.REDIS_COMMAND_TIMEOUT_MS, 500);
  t.same(limitParameters(settings), {
    burst: 60,
    tokenIntervalUs: 2_000_000,
    concurrency: 2,
    leaseUs: 10_000_000,
    failedAuthLimit: 10,
    failedAuthWindowSeconds: 60,
  });
});

t.test('TRUST_PROXY takes a flag, a hop count or proxy addresses', async (t) => {
  t.equal(loadSettings({ TRUST_PROXY: 'true' }).TRUST_PROXY, true);
  t.equal(loadSettings({ TRUST_PROXY: '2' }).TRUST_PROXY, 2);
  t.same(loadSettings({ TRUST_PROXY: '10.0.0.0/8, 2001:db8::1' }).TRUST_PROXY, ['10.0.0.0/8', '2001:db8::1']);
  const error = t.throws(() => loadSettings({ TRUST_PROXY: 'proxy.example' })) as SettingsError;
  t.equal(error.variable, 'TRUST_PROXY');
});

t.test('a fractional lease and rate become whole microseconds', async (t) => {
  const parameters = limitParameters(
    loadSettings({ CONCURRENCY_LEASE_SECONDS: '1.5', RATE_LIMIT_PER_SECOND: '3' }),
  );
  t.equal(parameters.leaseUs, 1_500_000);
  t.equal(parameters.tokenIntervalUs, 333_333);
});

t.test('Retry-After is whole seconds rounded up, at least 1', async (t) => {
  t.equal(retryAfterSeconds(0), 1);
  t.equal(retryAfterSeconds(1), 1);
  t.equal(retryAfterSeconds(1_000_000), 1);
  t.equal(retryAfterSeconds(1_000_001), 2);
  t.equal(retryAfterSeconds(1_900_000), 2);
});
