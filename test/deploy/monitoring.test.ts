/**
 * The alert and recording rules (deploy/prometheus/rules.yml) and the Grafana dashboard
 * (deploy/grafana/dashboards/gwapi.json) against a real Prometheus: Debian's `prometheus`, configured as
 * deploy/prometheus/prometheus.yml with its target swapped for a real `gwapi serve` and 1 s intervals,
 * scrapes the replica while a short load fills what the panels show. Then every expression is evaluated
 * through Prometheus' HTTP API: each must parse, read only metrics that exist, and return data, unless
 * QUIET says why it may not. .ci/run installs the package; elsewhere the test skips, saying so.
 */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { V1_PREFIX } from '../../src/contract.js';
import { HEALTH_READY_PATH } from '../../src/health/routes.js';
import { MEASUREMENTS_URL } from '../../src/v1/series/route.js';
import { seriesPath, WELLS_PATH } from '../../testkit/apiPaths.js';
import { fetchOutcome, pausedStreams, startFaultReplica } from '../../testkit/faults.js';
import { addKey, addRegularSeries, addWell } from '../../testkit/fixtures.js';
import { type PrometheusServer, type QueryAnswer, startPrometheus } from '../../testkit/prometheus.js';
import { freshDatabase } from '../helpers/database.js';
import {
  type Dashboard,
  interpolate,
  labelValuesQuery,
  panelTargets,
  rateIntervalSeconds,
  regexValue,
} from '../helpers/grafana.js';
import { unlessInstalled } from '../helpers/installed.js';
import { metricNames, withoutThreshold } from '../helpers/promql.js';
import { until } from '../helpers/until.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PROMETHEUS_FOLDER = join(ROOT, 'deploy/prometheus');
const DASHBOARD_FILE = join(ROOT, 'deploy/grafana/dashboards/gwapi.json');
/** Scrape and rule evaluation interval of the test's Prometheus. */
const SCRAPE_SECONDS = 1;
/** Grafana's $__interval never falls below the data source's scrape interval, as in a short time range. */
const INTERVAL_SECONDS = SCRAPE_SECONDS;
/** The replica's pool: two paused streams fill it, so a third request waits, and gets 503. */
const POOL_MAX = 2;
const WAIT_SECONDS = 3;
/** A key's token bucket, small enough for a burst of one key to be refused, large enough for the reader. */
const RATE_LIMIT_BURST = 20;
const FAILED_AUTH_LIMIT = 10;
/** The series route as the metrics label it. */
const SERIES_ROUTE = `${V1_PREFIX}${MEASUREMENTS_URL}`;

/**
 * Alerts whose condition a healthy short run does not meet, and why. Their operand (the expression
 * without its threshold) must still return data.
 */
const QUIET: Record<string, string> = {
  GwapiSeriesCutOff: 'no series fails after its first byte: the database stays up',
  GwapiDatabaseConnectionWait: 'requests waited for seconds, not 10 minutes, and none waits when evaluated',
  GwapiLimitsFallback: 'Redis answers throughout',
  GwapiSlowRoute: 'served responses stay below 1 s (60 s for series)',
  GwapiReplicaDown: 'the replica is up',
  GwapiReadReplicaLagging: 'the read replica is the primary itself: it never lags',
  GwapiReadReplicaDown: 'the read replica answers throughout',
  GwapiReadsUnavailable: 'the read replica serves every read',
};

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
}
const rules: Rule[] = (
  parse(readFileSync(join(PROMETHEUS_FOLDER, 'rules.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }
).groups.flatMap((group) => group.rules);
const recorded = rules.flatMap((rule) => rule.record ?? []);
const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;

interface ScrapeConfig {
  job_name: string;
  dns_sd_configs?: unknown;
}
const deployed = parse(readFileSync(join(PROMETHEUS_FOLDER, 'prometheus.yml'), 'utf8')) as {
  rule_files: string[];
  scrape_configs: ScrapeConfig[];
};

/** deploy/prometheus/prometheus.yml with 1 s intervals, absolute rule files and `target` for each job. */
const testConfig = (target: string) => ({
  global: { scrape_interval: `${SCRAPE_SECONDS}s`, evaluation_interval: `${SCRAPE_SECONDS}s` },
  rule_files: deployed.rule_files.map((file) => join(PROMETHEUS_FOLDER, file)),
  scrape_configs: deployed.scrape_configs.map(({ dns_sd_configs: _, ...job }) => ({
    ...job,
    static_configs: [{ targets: [target] }],
  })),
});

/** Names an expression reads that are neither stored in Prometheus nor recorded by a rule. */
const unknownMetrics = (expressions: { where: string; expr: string }[], known: Set<string>) =>
  expressions.flatMap(({ where, expr }) =>
    metricNames(expr)
      .filter((name) => !known.has(name))
      .map((name) => `${where}: ${name}`),
  );

const seriesOf = (answer: QueryAnswer) => answer.data?.result.length ?? 0;

/** One expression: it parses (the answer is a success) and, unless `mayBeEmpty`, returns data. */
function checkAnswer(t: Test, where: string, answer: QueryAnswer, mayBeEmpty = false) {
  t.equal(answer.status, 'success', `${where} parses`, { error: answer.error });
  if (!mayBeEmpty) t.ok(seriesOf(answer) > 0, `${where} returns data`);
}

/** A client address of the documentation range, so that failed-auth limits count no other test's. */
const clientAddress = () => `198.51.100.${randomInt(1, 255)}`;

t.test(
  'every rule and panel expression, evaluated by Prometheus scraping gwapi under load',
  { skip: unlessInstalled('prometheus', 'prometheus') },
  async (t) => {
    const db = await freshDatabase(t);
    const [tube] = await addWell(db.sql, 'Well', [{ number: '1' }]);
    // A year of 1-minute data: more than read-ahead and socket buffers take, so a paused client holds
    // its stream (and connection) open.
    await addRegularSeries(db.sql, tube!.id, '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '1 minute');
    const [reader, burster, holder, waiter] = await Promise.all(
      Array.from({ length: 4 }, () => addKey(db.sql, { tubeIds: [tube!.id] })),
    );
    const replica = await startFaultReplica(t, db.url, {
      DATABASE_POOL_MAX: String(POOL_MAX),
      DATABASE_WAIT_SECONDS: String(WAIT_SECONDS),
      RATE_LIMIT_BURST: String(RATE_LIMIT_BURST),
      RATE_LIMIT_PER_SECOND: '1',
      FAILED_AUTH_LIMIT: String(FAILED_AUTH_LIMIT),
      TRUST_PROXY: 'true',
      // The primary as its own read replica (not in recovery: lag 0), so the replica panels have data.
      DATABASE_READ_URL: db.url,
    });
    const prometheus = await startPrometheus(t, testConfig(new URL(replica.metricsBase).host));
    const hasData = (expr: string) => async () => seriesOf(await prometheus.query(expr)) > 0;
    const waitFor = (expr: string, timeoutMs = 15_000) => until(expr, hasData(expr), (yes) => yes, timeoutMs);
    await waitFor('up{job="gwapi"} == 1', 30_000);
    const loadStarted = Date.now() / 1000;

    // A reader: discovery, whole series, a 404, a 400, readiness checks.
    const day = seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z');
    const month = seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z');
    const year = seriesPath(tube!.identifier, '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z');
    const readerGets: [string, number][] = [
      [WELLS_PATH, 200],
      [WELLS_PATH, 200],
      [day, 200],
      [month, 200],
      [seriesPath('no-such-tube', '2024-01-01T00:00:00Z', '2024-01-02T00:00:00Z'), 404],
      [seriesPath(tube!.identifier, 'yesterday', '2024-01-02T00:00:00Z'), 400],
    ];
    for (const [path, status] of readerGets) {
      const outcome = await fetchOutcome(replica.base, path, { 'x-api-key': reader!.key });
      t.equal(outcome.status, status, `${path}: ${status}`);
    }
    t.equal((await fetchOutcome(replica.base, HEALTH_READY_PATH, {})).status, 200, 'ready');

    // One key's burst beyond its bucket: 429 by rate.
    const burst = await Promise.all(
      Array.from({ length: RATE_LIMIT_BURST + 5 }, () =>
        fetchOutcome(replica.base, WELLS_PATH, { 'x-api-key': burster!.key }),
      ),
    );
    t.ok(
      burst.some((outcome) => outcome.status === 429),
      'a burst beyond the bucket is refused (rate)',
    );

    // Two paused streams fill the pool: a third of that key is refused (concurrency), another key's
    // request waits at the connection gate and gets 503, and readiness fails meanwhile.
    const streams = await pausedStreams(replica.base, year, holder!.key, POOL_MAX);
    t.ok(streams, 'two streams hold the pool');
    const third = await fetchOutcome(replica.base, day, { 'x-api-key': holder!.key });
    t.equal(third.status, 429, 'a third stream of one key: 429 by concurrency');
    // Each 503 twice, a scrape apart: rate() sees a counter rise only between two samples of its series,
    // and a series is born with the first 503.
    // A series: its read needs the read replica's pool, which the streams hold (key lookups have the
    // primary's, and discovery may be cached).
    const waitAtGate = () => fetchOutcome(replica.base, day, { 'x-api-key': waiter!.key });
    const readiness = () => fetchOutcome(replica.base, HEALTH_READY_PATH, {});
    const failReadiness = () => until('readiness fails', readiness, (outcome) => outcome.status === 503);
    const waiting = waitAtGate();
    await waitFor('gwapi_db_connections{state="waiting"} > 0');
    t.equal((await waiting).status, 503, 'no connection came free: 503');
    await failReadiness();
    await waitFor(`gwapi_http_requests_total{route="${SERIES_ROUTE}", status="503"}`);
    await waitFor(`gwapi_http_requests_total{route="${HEALTH_READY_PATH}", status="503"}`);
    t.equal((await waitAtGate()).status, 503, 'and again');
    await failReadiness();
    for (const stream of streams ?? []) stream.abort();
    const released = () => replica.metric('gwapi_db_connections{state="held"}');
    await until('the streams gave their connections back', released, (held) => held === 0);

    // Bad keys from one address beyond FAILED_AUTH_LIMIT: 429 by failed-auth.
    const address = clientAddress();
    const badKeys = [];
    for (let i = 0; i <= FAILED_AUTH_LIMIT; i++) {
      badKeys.push(
        await fetchOutcome(replica.base, WELLS_PATH, {
          'x-api-key': 'not-a-key',
          'x-forwarded-for': address,
        }),
      );
    }
    t.equal(badKeys.at(-1)?.status, 429, 'bad keys beyond the limit: 429 by failed-auth', {
      statuses: badKeys.map((outcome) => outcome.status),
    });

    // Everything above is in Prometheus once a scrape after it has been stored and the rules read it.
    await waitFor('gwapi_rate_limited_total{reason="failed-auth"}');
    await waitFor('job:gwapi_http_requests_5xx:ratio_rate5m > 0');
    const loadEnded = Date.now() / 1000;
    t.comment(`load and scrapes: ${Math.round(loadEnded - loadStarted)} s`);

    const known = new Set([...(await prometheus.labelValues('__name__')), ...recorded]);
    const values = await variableValues(t, prometheus);
    const targets = panelTargets(dashboard).map((target) => ({
      ...target,
      expr: interpolate(target.expr, values),
    }));

    t.test('each rule parses and returns data, or is a quiet alert whose operand does', async (t) => {
      for (const name of Object.keys(QUIET)) {
        t.ok(
          rules.some((rule) => rule.alert === name),
          `${name}, exempt, is an alert`,
        );
      }
      for (const rule of rules) {
        const name = (rule.alert ?? rule.record)!;
        const quiet = QUIET[name];
        checkAnswer(t, name, await prometheus.query(rule.expr), quiet !== undefined);
        if (quiet === undefined) continue;
        t.comment(`${name} may return nothing: ${quiet}`);
        const operand = withoutThreshold(rule.expr);
        t.not(operand, rule.expr, `${name} has a threshold`);
        checkAnswer(t, `${name} without its threshold (${operand})`, await prometheus.query(operand));
      }
    });

    t.test('each panel target parses and returns data over the load, as Grafana asks', async (t) => {
      t.ok(targets.length >= 20, `${targets.length} targets`);
      for (const { where, expr } of targets) {
        checkAnswer(t, where, await prometheus.queryRange(expr, loadStarted, loadEnded, INTERVAL_SECONDS));
      }
    });

    t.test('every metric an expression reads exists in Prometheus or is recorded', async (t) => {
      const expressions = [
        ...rules.map((rule) => ({ where: (rule.alert ?? rule.record)!, expr: rule.expr })),
        ...targets,
      ];
      t.same(unknownMetrics(expressions, known), []);
      t.ok(known.has('nodejs_eventloop_lag_p99_seconds'), 'default metrics are scraped');
    });

    t.test('controls: a made-up metric and a target without data are caught', async (t) => {
      const [first] = targets;
      const doctored = { ...first!, expr: first!.expr.replace(/gwapi_\w+/, 'gwapi_made_up_total') };
      t.same(unknownMetrics([doctored], known), [`${first!.where}: gwapi_made_up_total`]);
      const empty = await prometheus.queryRange(
        interpolate(
          'sum(rate(gwapi_http_requests_total{job=~"$job", route="/never"}[$__rate_interval]))',
          values,
        ),
        loadStarted,
        loadEnded,
        INTERVAL_SECONDS,
      );
      t.equal(empty.status, 'success');
      t.equal(seriesOf(empty), 0, 'a route never asked returns no data: the data check can fail');
      const broken = await prometheus.query('sum by (route (gwapi_http_requests_total)');
      t.equal(broken.status, 'error', 'an expression that does not parse is an error');
    });
  },
);

/**
 * The dashboard's variables as Grafana fills them with "All" selected: the data source is the only
 * Prometheus; each label variable takes every value its query finds, in order, earlier ones
 * substituted; $__interval and $__rate_interval follow the scrape interval.
 */
async function variableValues(t: Test, prometheus: PrometheusServer): Promise<Record<string, string>> {
  const values: Record<string, string> = {
    __interval: `${INTERVAL_SECONDS}s`,
    __rate_interval: `${rateIntervalSeconds(INTERVAL_SECONDS, SCRAPE_SECONDS)}s`,
  };
  for (const variable of dashboard.templating.list) {
    if (variable.type === 'datasource') {
      t.equal(variable.query, 'prometheus', `$${variable.name} is a Prometheus data source`);
      values[variable.name] = 'prometheus';
      continue;
    }
    t.equal(variable.type, 'query', `$${variable.name} is a query variable`);
    const { selector, label } = labelValuesQuery(variable.query);
    const found = await prometheus.labelValues(label, interpolate(selector, values));
    t.ok(found.length > 0, `$${variable.name} finds values: ${found.join(', ')}`);
    values[variable.name] = regexValue(found);
  }
  return values;
}
