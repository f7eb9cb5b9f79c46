import { Counter, Gauge } from 'prom-client';
import { CountedHistogram, LatencyCounts, type MetricsRegistry } from './metrics.js';

/** Per-route counters kept as plain objects so recording a request builds no strings and allocates nothing. */
interface RouteStats {
  labels: { route: string };
  byStatus: Map<number, number>;
  bySource: Map<string, number>;
  latency: LatencyCounts;
}

const UNMATCHED = '(unmatched)';

/**
 * What the request pipeline records: request counts by route and status, a latency histogram per route, and the
 * tier that answered (X-Tile-Source for the tile family; `hit` / `miss` for cached JSON answers), from which a
 * dashboard derives cache hit ratios per tier. Requests in flight are counted for graceful shutdown.
 * Recording touches plain counters only; the registry's metrics read them when scraped (see metrics.ts for why).
 */
export class RequestMetrics {
  private readonly routes = new Map<string, RouteStats>();
  inflight = 0;

  constructor(registry?: MetricsRegistry) {
    if (registry) this.publish(registry);
  }

  record(route: string | undefined, status: number, seconds: number, source: string | undefined): void {
    const key = route ?? UNMATCHED;
    let r = this.routes.get(key);
    if (!r)
      this.routes.set(
        key,
        (r = { labels: { route: key }, byStatus: new Map(), bySource: new Map(), latency: new LatencyCounts() }),
      );
    r.byStatus.set(status, (r.byStatus.get(status) ?? 0) + 1);
    if (source !== undefined) r.bySource.set(source, (r.bySource.get(source) ?? 0) + 1);
    r.latency.observe(seconds);
  }

  /** Total requests answered, all routes (used by tests and the self-test). */
  get total(): number {
    let n = 0;
    for (const r of this.routes.values()) n += r.latency.count;
    return n;
  }

  private publish(registry: MetricsRegistry): void {
    const routes = this.routes;
    const registers = [registry];
    new Counter({
      name: 'svcmaps_http_requests_total',
      help: 'HTTP requests answered, by route pattern and status',
      labelNames: ['route', 'status'],
      registers,
      collect() {
        this.reset();
        for (const [route, r] of routes) for (const [status, n] of r.byStatus) this.inc({ route, status }, n);
      },
    });
    new CountedHistogram(
      {
        name: 'svcmaps_http_request_duration_seconds',
        help: 'Time from routing to reply, by route pattern',
        labelNames: ['route'],
        registers,
      },
      function* () {
        for (const r of routes.values()) yield [r.labels, r.latency];
      },
    );
    new Counter({
      name: 'svcmaps_answers_total',
      help: 'Answers by the tier that served them (tiles: memory, cache, fresh, ancestor-*; JSON: hit or miss)',
      labelNames: ['route', 'source'],
      registers,
      collect() {
        this.reset();
        for (const [route, r] of routes) for (const [source, n] of r.bySource) this.inc({ route, source }, n);
      },
    });
    const inflight = () => this.inflight;
    new Gauge({
      name: 'svcmaps_http_requests_in_flight',
      help: 'Requests being handled now',
      registers,
      collect() {
        this.set(inflight());
      },
    });
  }
}
