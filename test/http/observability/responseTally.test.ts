/**
 * The response tally against prom-client's own Counter and Histogram: the same responses must give the
 * same exposition, line for line, and the same JSON, so that dashboards and alerts cannot tell which
 * of the two counted.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import t from 'tap';
import { createResponseTally, type RequestLabels } from '../../../src/http/observability/responseTally.js';
import { seededRandom } from '../../helpers/random.js';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const REQUESTS = { name: 'test_requests_total', help: 'Responses.' };
const DURATION = { name: 'test_duration_seconds', help: 'Durations.' };
const BYTES = { name: 'test_bytes_total', help: 'Bytes.' };

/** The same families made of prom-client's classes, updated as metrics.ts updated them before. */
function withPromClient() {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ ...REQUESTS, labelNames, registers: [registry] });
  const duration = new Histogram({ ...DURATION, labelNames, buckets: BUCKETS, registers: [registry] });
  const bytes = new Counter({ ...BYTES, labelNames: ['route'] as const, registers: [registry] });
  return {
    registry,
    add(labels: RequestLabels, seconds: number, bytesWritten: number) {
      requests.inc(labels);
      duration.observe(labels, seconds);
      bytes.inc({ route: labels.route }, bytesWritten);
    },
  };
}

function withTally() {
  const registry = new Registry();
  const tally = createResponseTally(registry, {
    requests: REQUESTS,
    duration: { ...DURATION, buckets: BUCKETS },
    bytes: BYTES,
  });
  return { registry, add: tally.add };
}

t.test('the same exposition and JSON as prom-client for the same responses', async (t) => {
  const reference = withPromClient();
  const tallied = withTally();
  t.equal(await tallied.registry.metrics(), await reference.registry.metrics(), 'before any response');

  const random = seededRandom(7);
  const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)]!;
  // On a bound (counted in that bucket), just above one, zero, and beyond the last bound.
  const edges = [0, 0.005, 0.0050001, 1, 300, 300.5, 1e4];
  for (let i = 0; i < 2000; i++) {
    const labels = {
      method: pick(['GET', 'HEAD', 'DELETE']),
      route: pick(['/v1/groundwater-monitoring-wells', '/v1/openapi.json', 'unmatched']),
      status: pick(['200', '304', '404', '405', '429']),
    };
    const seconds = i < edges.length ? edges[i]! : random() ** 4 * 400;
    const bytesWritten = Math.floor(random() * 300_000);
    reference.add(labels, seconds, bytesWritten);
    tallied.add(labels, seconds, bytesWritten);
  }

  const exposition = await tallied.registry.metrics();
  t.equal(exposition, await reference.registry.metrics(), 'the exposition, line for line');
  t.match(
    exposition,
    /^test_duration_seconds_bucket\{le="0.005",method="\w+",route="[^"]+",status="\d+"\} \d+$/m,
  );
  // prom-client's own values also carry `exemplar: null` (exemplars are off): no meaning, not compared.
  const meaning = async (registry: Registry) =>
    (await registry.getMetricsAsJSON()).map(({ name, help, type, aggregator, values }) => ({
      name,
      help,
      type,
      aggregator,
      values: values.map(
        ({ value, labels, metricName }: { metricName?: string } & (typeof values)[number]) => ({
          value,
          labels,
          metricName,
        }),
      ),
    }));
  t.same(await meaning(tallied.registry), await meaning(reference.registry), 'the JSON form');
});

t.test('a label set is counted apart from every other', async (t) => {
  const tallied = withTally();
  const wells = { method: 'GET', route: '/v1/groundwater-monitoring-wells', status: '200' };
  tallied.add(wells, 0.002, 100);
  tallied.add(wells, 0.2, 50);
  tallied.add({ ...wells, status: '429' }, 0.001, 10);
  const lines = (await tallied.registry.metrics()).split('\n');
  const value = (sample: string) => lines.find((line) => line.startsWith(`${sample} `))?.split(' ')[1];
  const labels = 'method="GET",route="/v1/groundwater-monitoring-wells"';
  t.equal(value(`test_requests_total{${labels},status="200"}`), '2');
  t.equal(value(`test_requests_total{${labels},status="429"}`), '1');
  t.equal(value(`test_duration_seconds_bucket{le="0.005",${labels},status="200"}`), '1');
  t.equal(value(`test_duration_seconds_bucket{le="0.25",${labels},status="200"}`), '2');
  t.equal(value(`test_duration_seconds_sum{${labels},status="200"}`), '0.202');
  t.equal(value('test_bytes_total{route="/v1/groundwater-monitoring-wells"}'), '160', 'bytes by route only');
});
