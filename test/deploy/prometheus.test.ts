/**
 * deploy/prometheus/rules.yml: Debian's promtool checks the rules and runs their unit tests
 * (rules.test.yml), every alert has a firing and a silent case there and a runbook line in
 * docs/operations/monitoring.md, and every metric an expression reads is one a running service exports,
 * read from a real scrape.
 * promtool comes with Debian's `prometheus` package, which .ci/run installs; elsewhere the promtool
 * tests skip, saying so, when it is missing (never in CI).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parse } from 'yaml';
import { HEALTH_READY_PATH } from '../../src/health/routes.js';
import { createMetrics } from '../../src/http/observability/metrics.js';
import { listenForMetrics } from '../../src/http/observability/metricsServer.js';
import { startApi } from '../helpers/api.js';
import { get } from '../helpers/http.js';
import { unlessInstalled } from '../helpers/installed.js';
import { exportedNames, metricNames } from '../helpers/promql.js';
import { scriptedLimits } from '../helpers/scriptedLimits.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FOLDER = join(ROOT, 'deploy/prometheus');
const RULES = 'rules.yml';
const RULE_TESTS = 'rules.test.yml';
/** The page whose "Alerts" table holds each alert's runbook line, as rules.yml links it. */
const RUNBOOK = 'docs/operations/monitoring.md';
/** Series Prometheus writes itself for every target it scrapes. */
const PER_TARGET_SERIES = ['up'];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTests {
  tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
}

const read = (file: string) => readFileSync(join(FOLDER, file), 'utf8');
const rules: Rule[] = (parse(read(RULES)) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const alerts = rules.filter((rule) => rule.alert !== undefined);
const noPromtool = unlessInstalled('promtool', 'prometheus');

function promtool(t: Test, ...args: string[]) {
  const result = spawnSync('promtool', args, { cwd: FOLDER, encoding: 'utf8' });
  if (result.error) throw result.error;
  t.equal(result.status, 0, `promtool ${args.join(' ')}`, { output: result.stdout + result.stderr });
}

t.test('promtool check rules', { skip: noPromtool }, async (t) => {
  promtool(t, 'check', 'rules', RULES);
});

t.test(
  "promtool check config: the compose profile's scrape configuration",
  { skip: noPromtool },
  async (t) => {
    promtool(t, 'check', 'config', 'prometheus.yml');
  },
);

t.test('promtool test rules', { skip: noPromtool }, async (t) => {
  promtool(t, 'test', 'rules', RULE_TESTS);
});

t.test('each alert fires in a unit test and stays silent in another', async (t) => {
  const cases = (parse(read(RULE_TESTS)) as RuleTests).tests.flatMap((test) => test.alert_rule_test ?? []);
  for (const { alert } of alerts) {
    const own = cases.filter((test) => test.alertname === alert);
    t.ok(
      own.some((test) => test.exp_alerts.length > 0),
      `${alert} fires in a test`,
    );
    t.ok(
      own.some((test) => test.exp_alerts.length === 0),
      `${alert} stays silent in a test`,
    );
  }
});

t.test('each alert has a severity, a summary, a description and its runbook line', async (t) => {
  const runbook = readFileSync(join(ROOT, RUNBOOK), 'utf8');
  t.ok(alerts.length >= 7, `${alerts.length} alerts`);
  for (const { alert, labels, annotations } of alerts) {
    t.match(labels?.severity, /^(critical|warning)$/, `${alert} severity`);
    t.ok(annotations?.summary && annotations.description, `${alert} summary and description`);
    const anchor = `alert-${alert!.toLowerCase()}`;
    t.equal(annotations?.runbook_url, `${RUNBOOK}#${anchor}`, `${alert} runbook_url`);
    t.ok(runbook.includes(`<a id="${anchor}"></a>`), `${RUNBOOK} has the anchor ${anchor}`);
  }
});

t.test('metric names of an expression', async (t) => {
  t.same(
    metricNames(
      'histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{route!~"x|y", s="by (z)"}[5m] offset 1h))) ' +
        '/ on (job) group_left (route) b:c:rate5m > bool 1e-3 or up == 0 unless absent(d)',
    ),
    ['a_bucket', 'b:c:rate5m', 'up', 'd'],
  );
});

t.test('every metric the rules read is one the service exports', async (t) => {
  const limits = scriptedLimits();
  const metrics = createMetrics({ limits, poolMax: 1 });
  const api = await startApi(t, { limits, metrics });
  const listener = await listenForMetrics(metrics, { HOST: '127.0.0.1', METRICS_PORT: 0 }, api.app.log);
  t.teardown(() => listener?.close());
  const address = listener?.server.address();
  if (!address || typeof address === 'string') throw new Error('the metrics listener does not listen');
  // One response, so that the request counter and the duration histogram have samples.
  t.equal((await get(api.base, HEALTH_READY_PATH)).status, 200);
  const scrape = await get(`http://127.0.0.1:${address.port}`, '/metrics');
  t.equal(scrape.status, 200);
  t.match(scrape.body, `route="${HEALTH_READY_PATH}"`, 'readiness checks are counted by route');
  const exported = exportedNames(scrape.body);
  const recorded = new Set(rules.flatMap((rule) => rule.record ?? []));
  for (const rule of rules) {
    const name = rule.alert ?? rule.record;
    const read = metricNames(rule.expr);
    t.ok(read.length > 0, `${name} reads a metric`);
    for (const metric of read) {
      t.ok(
        exported.has(metric) || recorded.has(metric) || PER_TARGET_SERIES.includes(metric),
        `${name} reads ${metric}`,
      );
    }
  }
});
