/**
 * docker-compose.yml and deploy/haproxy.cfg, checked without a Docker engine: Debian's `docker-compose`
 * resolves and validates the file exactly as `docker compose up` would read it (with .env.example as the
 * operator's .env), and `haproxy -c` checks the load balancer's configuration. Both tools are installed by
 * .ci/run; elsewhere these tests skip, saying so, when a tool is missing (never in CI).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { loadSettings } from '../../src/config.js';
import { HEALTH_READY_PATH } from '../../src/health/routes.js';
import { unlessInstalled } from '../helpers/installed.js';
import { CLOSE_AFTER_GRACE_SECONDS } from './shutdown.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function run(command: string, args: string[], cwd: string) {
  // A minimal environment: COMPOSE_* or secrets of the caller must not change what is checked.
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Parses `KEY=value` lines of an env file (comments and blank lines skipped). */
const parseEnvFile = (text: string) =>
  Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z_][A-Z0-9_]*=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; interval?: string };
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  /** Long form, or `HOST_IP:PUBLISHED:TARGET/tcp` as docker-compose prints a port bound to one address. */
  ports?: ({ published: number; target: number } | string)[];
  volumes?: string[];
  profiles?: string[];
}
interface PrometheusConfig {
  global: { scrape_interval: string };
  rule_files: string[];
  scrape_configs: { job_name: string; dns_sd_configs?: { names: string[]; port: number }[] }[];
}
interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/**
 * The deployment files in a folder of their own, `.env` made from .env.example and then `editEnv`, and
 * `docker-compose config` run there: the repository's own .env (if any) is never read.
 */
async function composeConfig(t: Test, editEnv: (env: string) => string = (env) => env) {
  const dir = await mkdtemp(join(tmpdir(), 'gwapi-compose-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await cp(join(ROOT, 'docker-compose.yml'), join(dir, 'docker-compose.yml'));
  await cp(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true });
  const env = editEnv(await readFile(join(ROOT, '.env.example'), 'utf8'));
  await writeFile(join(dir, '.env'), env);
  return { ...run('docker-compose', ['-f', 'docker-compose.yml', 'config'], dir), env: parseEnvFile(env) };
}

/**
 * docker-compose prints YAML; its own YAML library reads it: python3-yaml, a dependency of the Debian
 * package, in the Python that runs docker-compose (its #! line; `python3` on PATH may be another one).
 */
function yamlToJson(yaml: string): Compose {
  const compose = spawnSync('sh', ['-c', 'command -v docker-compose'], { encoding: 'utf8' }).stdout.trim();
  const [python = 'python3', ...pythonArgs] = readFileSync(compose, 'utf8')
    .split('\n')[0]!
    .replace(/^#!\s*/, '')
    .split(/\s+/);
  const script = 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)';
  const result = spawnSync(python, [...pythonArgs, '-c', script], { input: yaml, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`cannot read docker-compose's output: ${result.stderr}`);
  return JSON.parse(result.stdout) as Compose;
}

const noCompose = unlessInstalled('docker-compose', 'docker-compose');

t.test('docker-compose.yml is valid with .env.example as .env', { skip: noCompose }, async (t) => {
  const result = await composeConfig(t);
  t.equal(result.stderr, '', 'no warnings');
  t.equal(result.code, 0);
  const { services: all, volumes } = yamlToJson(result.stdout);
  // docker-compose config lists every service; `up` without --profile starts those without one.
  const services = Object.fromEntries(Object.entries(all).filter(([, service]) => !service.profiles));
  const { db, redis, migrate, api, lb } = services;
  t.same(Object.keys(services).sort(), ['api', 'db', 'lb', 'migrate', 'redis']);
  if (!db || !redis || !migrate || !api || !lb) return;

  t.test('images are pinned to exact versions; TimescaleDB is 2.13 or later on PostgreSQL 17', async (t) => {
    for (const service of [db, redis, lb]) t.match(service.image, /^[\w./-]+:\d+\.\d+\.\d+(-[\w.]+)?$/);
    const [, major, minor] = /^timescale\/timescaledb:(\d+)\.(\d+)\.\d+-pg17$/.exec(db.image ?? '') ?? [];
    t.ok(Number(major) === 2 && Number(minor) >= 13, `by_range needs TimescaleDB 2.13+: ${db.image}`);
    t.equal(api.image, migrate.image, 'migrate runs the same gwapi image as the replicas');
  });

  t.test('migrate runs once the database is healthy; three replicas wait for it', async (t) => {
    t.same(migrate.command, ['migrate']);
    t.same(migrate.depends_on?.db, { condition: 'service_healthy' });
    t.same(api.command, ['serve']);
    t.equal(api.deploy?.replicas, 3);
    t.same(api.depends_on?.migrate, { condition: 'service_completed_successfully' });
    t.same(api.depends_on?.redis, { condition: 'service_healthy' });
  });

  t.test('every long-running service has a health check', async (t) => {
    for (const name of ['db', 'redis', 'lb']) t.match(services[name]?.healthcheck?.test?.[0], /^CMD/, name);
    // The replicas' test is the image's HEALTHCHECK (see dockerfile.test.ts); compose sets its timing.
    t.ok(api.healthcheck?.interval, 'api');
    t.same(migrate.healthcheck?.test, ['NONE'], 'migrate is one-shot: its exit code is its health');
  });

  t.test('one published port, the load balancer; the database lives on a named volume', async (t) => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      (s.ports ?? []).map((p) => (typeof p === 'string' ? { name, p } : { name, ...p })),
    );
    t.same(published, [{ name: 'lb', published: Number(result.env.GWAPI_PORT), target: 8080 }]);
    const [source, target] = (db.volumes ?? [])[0]?.split(':') ?? [];
    t.equal(target, '/var/lib/postgresql/data');
    t.ok(source && source in (volumes ?? {}), `named volume: ${source}`);
  });

  t.test('the replicas get a valid gwapi configuration built from the .env secrets', async (t) => {
    const environment = api.environment ?? {};
    t.equal(
      environment.DATABASE_URL,
      `postgres://gwapi:${result.env.POSTGRES_PASSWORD}@db:5432/gwapi`,
      'database password from .env',
    );
    t.equal(environment.REDIS_URL, `redis://:${result.env.REDIS_PASSWORD}@redis:6379/0`);
    const settings = loadSettings(environment);
    t.equal(settings.HOST, '0.0.0.0');
    t.equal(settings.TRUST_PROXY, 1, 'one proxy hop: the load balancer');

    // Every streaming response holds a connection; 20 stay for gwapi commands, psql and superusers.
    const maxConnections = Number(db.command?.find((a) => a.startsWith('max_connections='))?.split('=')[1]);
    const budget = (api.deploy?.replicas ?? 0) * settings.DATABASE_POOL_MAX;
    t.ok(
      budget + 20 <= maxConnections,
      `replicas × pool (${budget}) + 20 ≤ max_connections (${maxConnections})`,
    );
  });

  t.test('HAProxy sends requests to the replicas on their port and checks their readiness', async (t) => {
    const haproxy = await readFile(join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
    const [, slots, port] = /^\s*server-template api (\d+) api:(\d+)/m.exec(haproxy) ?? [];
    t.equal(port, api.environment?.PORT, 'the port the replicas listen on');
    t.ok(Number(slots) >= (api.deploy?.replicas ?? Number.POSITIVE_INFINITY), 'a slot for every replica');
    const [, checked] = /^\s*http-check send meth GET uri (\S+) /m.exec(haproxy) ?? [];
    t.equal(checked, HEALTH_READY_PATH, "the replicas' readiness");
    t.match(haproxy, /^\s*http-check expect status 200$/m, '503 (not ready) takes a replica out');
    t.match(haproxy, /^\s*bind :8080$/m, 'listens on the published target port');
  });
});

t.test(
  'the monitoring profile: pinned Prometheus and Grafana, provisioned from deploy/',
  { skip: noCompose },
  async (t) => {
    const result = await composeConfig(t);
    t.equal(result.code, 0);
    const { services } = yamlToJson(result.stdout);
    const { api, prometheus, grafana } = services;
    const inProfile = Object.keys(services).filter((name) => services[name]?.profiles);
    t.same(inProfile.sort(), ['grafana', 'prometheus'], 'only these two are in a profile');
    if (!api || !prometheus || !grafana) return;
    t.same(prometheus.profiles, ['monitoring']);
    t.same(grafana.profiles, ['monitoring']);
    t.match(prometheus.image, /^prom\/prometheus:v\d+\.\d+\.\d+$/, 'Prometheus pinned');
    t.match(grafana.image, /^grafana\/grafana:\d+\.\d+\.\d+$/, 'Grafana pinned');

    // Bind mounts as docker-compose resolves them: SOURCE:TARGET:ro, the source in the checked folder.
    const mounts = (service: Service) =>
      Object.fromEntries(
        (service.volumes ?? [])
          .map((volume) => volume.split(':'))
          .filter(([source]) => source?.startsWith('/'))
          .map(([source, target]) => [target!, source!]),
      );
    for (const [name, service] of [
      ['prometheus', prometheus],
      ['grafana', grafana],
    ] as const) {
      for (const [target, source] of Object.entries(mounts(service))) {
        t.ok(
          existsSync(source),
          `${name}: ${target} comes from ${source.replace(/^.*?\/deploy\//, 'deploy/')}, which exists`,
        );
      }
    }
    const prometheusMounts = mounts(prometheus);
    const configFile = prometheusMounts['/etc/prometheus/prometheus.yml'];
    t.ok(configFile, 'the scrape configuration is mounted where --config.file points');
    t.ok(prometheus.command?.includes('--config.file=/etc/prometheus/prometheus.yml'), '--config.file');
    const config = parse(await readFile(configFile!, 'utf8')) as PrometheusConfig;
    for (const rules of config.rule_files) {
      t.ok(prometheusMounts[join('/etc/prometheus', rules)], `${rules} is mounted beside it`);
    }
    const [job] = config.scrape_configs;
    t.equal(job?.job_name, 'gwapi', 'the job the rules read');
    t.same(job?.dns_sd_configs?.[0]?.names, ['api'], 'the replicas, by their service name');
    t.equal(
      String(job?.dns_sd_configs?.[0]?.port),
      api.environment?.METRICS_PORT,
      "on the replicas' METRICS_PORT",
    );
    t.equal(
      loadSettings(api.environment ?? {}).METRICS_PORT,
      job?.dns_sd_configs?.[0]?.port,
      'a valid setting',
    );

    const grafanaMounts = mounts(grafana);
    const provisioning = grafanaMounts['/etc/grafana/provisioning'];
    t.ok(provisioning, 'provisioning mounted');
    const datasources = parse(await readFile(join(provisioning!, 'datasources/prometheus.yml'), 'utf8')) as {
      datasources: { type: string; url: string; jsonData: { timeInterval: string } }[];
    };
    const [datasource] = datasources.datasources;
    t.equal(datasource?.type, 'prometheus', 'a Prometheus data source');
    t.equal(datasource?.url, 'http://prometheus:9090', "the profile's Prometheus");
    t.equal(datasource?.jsonData.timeInterval, config.global.scrape_interval, 'its scrape interval');
    const providers = parse(await readFile(join(provisioning!, 'dashboards/gwapi.yml'), 'utf8')) as {
      providers: { options: { path: string } }[];
    };
    const dashboards = grafanaMounts[providers.providers[0]!.options.path];
    t.ok(
      dashboards && existsSync(join(dashboards, 'gwapi.json')),
      'the dashboard is where the provider reads',
    );

    // Nothing to log in to, so no password: anonymous viewers, no admin account.
    const environment = grafana.environment ?? {};
    t.equal(environment.GF_AUTH_ANONYMOUS_ORG_ROLE, 'Viewer');
    t.equal(environment.GF_SECURITY_DISABLE_INITIAL_ADMIN_CREATION, 'true');
    t.notOk(environment.GF_SECURITY_ADMIN_PASSWORD, 'no admin password');

    for (const [name, service] of [
      ['prometheus', prometheus],
      ['grafana', grafana],
    ] as const) {
      for (const port of service.ports ?? [])
        t.match(port, /^127\.0\.0\.1:\d+:\d+\/tcp$/, `${name} on loopback only`);
    }
  },
);

t.test('a stopping replica drains before Docker kills it', { skip: noCompose }, async (t) => {
  const result = await composeConfig(t);
  const api = yamlToJson(result.stdout).services.api;
  const [, amount, unit] = /^(\d+)(s|m)$/.exec(api?.stop_grace_period ?? '') ?? [];
  const stopGraceSeconds = Number(amount) * (unit === 'm' ? 60 : 1);
  const settings = loadSettings(api?.environment ?? {});
  t.ok(
    settings.SHUTDOWN_GRACE_SECONDS + CLOSE_AFTER_GRACE_SECONDS <= stopGraceSeconds,
    `SHUTDOWN_GRACE_SECONDS (${settings.SHUTDOWN_GRACE_SECONDS}) + ${CLOSE_AFTER_GRACE_SECONDS} ≤ stop_grace_period (${api?.stop_grace_period})`,
  );
});

t.test('a missing secret stops docker-compose; no password has a default', { skip: noCompose }, async (t) => {
  for (const secret of ['POSTGRES_PASSWORD', 'REDIS_PASSWORD']) {
    const without = new RegExp(`^${secret}=.*\\n`, 'm');
    const result = await composeConfig(t, (env) => env.replace(without, ''));
    t.not(result.code, 0, secret);
    t.match(result.stderr, `set ${secret} in .env`, secret);
  }
});

t.test('.env is ignored by git; .env.example is the committed one', async (t) => {
  t.equal(run('git', ['check-ignore', '-q', '.env'], ROOT).code, 0, '.env ignored');
  t.equal(run('git', ['check-ignore', '-q', '.env.example'], ROOT).code, 1, '.env.example not ignored');
});

t.test(
  'haproxy -c accepts deploy/haproxy.cfg',
  { skip: unlessInstalled('haproxy', 'haproxy') },
  async (t) => {
    const result = run('haproxy', ['-c', '-f', 'deploy/haproxy.cfg'], ROOT);
    t.equal(result.code, 0, result.stderr);
    // Outside Docker the replicas' name does not resolve (inside, Docker's DNS resolves it): nothing else.
    const warnings = result.stderr
      .split('\n')
      .filter((line) => line.includes('[WARNING]') && !/could not resolve address 'api'/.test(line));
    t.same(warnings, [], 'no other warnings');
  },
);
