/**
 * Prometheus metrics through prom-client. Each app has its own Registry (never prom-client's global one: tests build
 * several apps in one process) holding svcmaps's metrics beside prom-client's default process metrics (CPU, resident
 * and heap memory, event-loop lag, GC pauses, handles, file descriptors). Metrics are declared in ops/, which wraps
 * the services from outside (app-metrics.ts), against the app's registry with `registers: [registry]`; a gauge read
 * at scrape time gets a `collect()` that sets it.
 *
 * The request path does not call prom-client: each of its increments and observations builds and validates a label
 * key, several times the cost of all of RequestMetrics.record(). Requests are counted in plain counters
 * (`LatencyCounts`, request-metrics.ts) that prom-client reads when scraped.
 */
import { collectDefaultMetrics, Histogram, Registry, type Metric } from 'prom-client';

export type MetricsRegistry = Registry;

/** Latency buckets in seconds: 1 ms to 10 s, enough resolution for a cache hit and for a cold render. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The default process metrics describe the process, not an app, and each collection installs an event-loop delay
 * monitor and a GC observer that are never removed; so they are collected once per process, into a registry of this
 * module's own, and the same metric objects are registered in every app's registry.
 */
let processMetrics: Registry | undefined;
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/** A new registry for one app, with the process metrics already in it. */
export function createMetricsRegistry(): MetricsRegistry {
  const registry = new Registry();
  // getMetricsAsArray() is typed as plain metric descriptions; the objects are the metrics themselves.
  for (const m of processRegistry().getMetricsAsArray()) registry.registerMetric(m as unknown as Metric);
  return registry;
}

/** One histogram series counted by hand: observing touches a single slot, cumulative counts are made at scrape. */
export class LatencyCounts {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly buckets: readonly number[] = LATENCY_BUCKETS) {
    this.counts = new Float64Array(buckets.length + 1);
  }
  observe(v: number): void {
    const b = this.buckets;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

type HistogramData = Awaited<ReturnType<Histogram['get']>>;
type Sample = { metricName: string; labels: Record<string, string | number>; value: number };

/**
 * A prom-client histogram whose series are counted elsewhere (`LatencyCounts`, on the hot path) and read when the
 * registry is scraped. prom-client validates its name and labels, registers it and formats the exposition (the same
 * shape its own histograms produce); only the values come from `read`. Its observe() is not used.
 */
export class CountedHistogram<T extends string> extends Histogram<T> {
  private readonly meta: { name: string; help: string };

  constructor(
    config: { name: string; help: string; labelNames: readonly T[]; registers: Registry[]; buckets?: number[] },
    private readonly read: () => Iterable<[Record<T, string | number>, LatencyCounts]>,
  ) {
    super({ ...config, buckets: config.buckets ?? LATENCY_BUCKETS });
    this.meta = { name: config.name, help: config.help };
    // The registry formats from get() unless a metric has prom-client's internal getForPromString(); hide it.
    Object.defineProperty(this, 'getForPromString', { value: undefined });
  }

  override get(): Promise<HistogramData> {
    const { name, help } = this.meta;
    const values: Sample[] = [];
    for (const [labels, h] of this.read()) {
      let cum = 0;
      for (let i = 0; i < h.buckets.length; i++) {
        cum += h.counts[i]!;
        values.push({ metricName: `${name}_bucket`, labels: { ...labels, le: h.buckets[i]! }, value: cum });
      }
      values.push(
        { metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: h.count },
        { metricName: `${name}_sum`, labels, value: h.sum },
        { metricName: `${name}_count`, labels, value: h.count },
      );
    }
    return Promise.resolve({ name, help, type: 'histogram', aggregator: 'sum', values } as unknown as HistogramData);
  }
}
