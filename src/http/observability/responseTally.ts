/**
 * Responses tallied per method, route pattern and status: how many, how long (a histogram), and the
 * bytes written per route. Every response passes here, so the update is one Map lookup and a few
 * additions. prom-client's Counter and Histogram validate and hash the whole label set on every update,
 * and their three updates per response cost a cached discovery request more than the 10 % of its
 * server CPU that would make us give up the library (docs/decisions/0009-home-made-parts.md).
 *
 * The tallies become metric values only when scraped: three metric families that prom-client's
 * Registry exports like its own metrics (it asks each for `name`, `help`, `type` and its values), in
 * the very form its Counter and Histogram give (test/http/observability/responseTally.test.ts compares the two).
 */
import type { Metric, Registry } from 'prom-client';

export interface RequestLabels {
  method: string;
  /** The route pattern, or `unmatched`. */
  route: string;
  status: string;
}

interface Tally {
  labels: RequestLabels;
  count: number;
  sum: number;
  /** Observations per bucket, not cumulative: [i] ≤ bounds[i] (and > bounds[i - 1]); the last, above all. */
  perBucket: number[];
}

interface Value {
  value: number;
  labels: Record<string, string | number>;
  /** As prom-client's Histogram: labels written after `labels` (the `le` of a bucket comes first). */
  sharedLabels?: RequestLabels;
  metricName?: string;
}

interface Family {
  name: string;
  help: string;
}

export function createResponseTally(
  registry: Registry,
  families: { requests: Family; duration: Family & { buckets: readonly number[] }; bytes: Family },
) {
  const bounds = families.duration.buckets;
  const tallies = new Map<string, Tally>();
  const bytesByRoute = new Map<string, number>();

  const family = ({ name, help }: Family, type: 'counter' | 'histogram', values: () => Value[]) => {
    const exported = {
      name,
      help,
      type,
      aggregator: 'sum',
      // The registry writes the exposition from this one (labels and sharedLabels apart, as
      // prom-client's Histogram does), and JSON from get().
      getForPromString: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
      get: async () => ({
        name,
        help,
        type,
        aggregator: 'sum',
        values: values().map(({ sharedLabels, ...value }) => ({
          ...value,
          labels: { ...value.labels, ...sharedLabels },
        })),
      }),
    };
    // The Registry takes any object of this shape; its typings name only prom-client's own classes.
    registry.registerMetric(exported as unknown as Metric);
  };

  family(families.requests, 'counter', () =>
    [...tallies.values()].map(({ labels, count }) => ({ value: count, labels: { ...labels } })),
  );
  family(families.duration, 'histogram', () =>
    [...tallies.values()].flatMap(({ labels, count, sum, perBucket }) => {
      const value = (suffix: string, value: number, le?: number | string): Value => ({
        value,
        labels: le === undefined ? {} : { le },
        sharedLabels: labels,
        metricName: `${families.duration.name}_${suffix}`,
      });
      let cumulative = 0;
      const buckets = bounds.map((bound, i) => {
        cumulative += perBucket[i]!;
        return value('bucket', cumulative, bound);
      });
      return [...buckets, value('bucket', count, '+Inf'), value('sum', sum), value('count', count)];
    }),
  );
  family(families.bytes, 'counter', () =>
    [...bytesByRoute].map(([route, value]) => ({ value, labels: { route } })),
  );

  return {
    /** A response is over: counted once, with how long it took and how many bytes it wrote. */
    add(labels: RequestLabels, seconds: number, bytesWritten: number): void {
      const key = `${labels.method} ${labels.route} ${labels.status}`;
      let tally = tallies.get(key);
      if (tally === undefined) {
        tally = { labels: { ...labels }, count: 0, sum: 0, perBucket: new Array(bounds.length + 1).fill(0) };
        tallies.set(key, tally);
      }
      tally.count++;
      tally.sum += seconds;
      let bucket = 0;
      while (bucket < bounds.length && seconds > bounds[bucket]!) bucket++;
      tally.perBucket[bucket]!++;
      bytesByRoute.set(labels.route, (bytesByRoute.get(labels.route) ?? 0) + bytesWritten);
    },
  };
}
