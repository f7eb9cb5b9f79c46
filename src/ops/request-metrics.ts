import { Histogram, labelText, type MetricsRegistry } from './metrics.js';

/** Per-route counters kept as plain objects so recording a request builds no strings and allocates nothing. */
interface RouteStats {
  labels: string;
  byStatus: Map<number, number>;
  bySource: Map<string, number>;
  latency: Histogram;
}

const UNMATCHED = '(unmatched)';

/**
 * What the request pipeline records: request counts by route and status, a latency histogram per route, and the
 * tier that answered (X-Tile-Source for the tile family; `hit` / `miss` for cached JSON answers), from which a
 * dashboard derives cache hit ratios per tier. Requests in flight are counted for graceful shutdown.
 */
export class RequestMetrics {
  private readonly routes = new Map<string, RouteStats>();
  inflight = 0;

  constructor(registry?: MetricsRegistry) {
    registry?.addCollector(() => this.lines());
  }

  record(route: string | undefined, status: number, seconds: number, source: string | undefined): void {
    const key = route ?? UNMATCHED;
    let r = this.routes.get(key);
    if (!r)
      this.routes.set(
        key,
        (r = { labels: labelText({ route: key }), byStatus: new Map(), bySource: new Map(), latency: new Histogram() }),
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

  private lines(): string[] {
    const out = [
      '# HELP svcmaps_http_requests_total HTTP requests answered, by route pattern and status',
      '# TYPE svcmaps_http_requests_total counter',
    ];
    for (const r of this.routes.values()) {
      const inner = r.labels.slice(1, -1);
      for (const [status, n] of r.byStatus) out.push(`svcmaps_http_requests_total{${inner},status="${status}"} ${n}`);
    }
    out.push(
      '# HELP svcmaps_http_request_duration_seconds Time from routing to reply, by route pattern',
      '# TYPE svcmaps_http_request_duration_seconds histogram',
    );
    for (const r of this.routes.values())
      out.push(...r.latency.lines('svcmaps_http_request_duration_seconds', r.labels));
    out.push(
      '# HELP svcmaps_answers_total Answers by the tier that served them (tiles: memory, cache, fresh, ancestor-*; JSON: hit or miss)',
      '# TYPE svcmaps_answers_total counter',
    );
    for (const r of this.routes.values()) {
      const inner = r.labels.slice(1, -1);
      for (const [source, n] of r.bySource)
        out.push(`svcmaps_answers_total{${inner},source="${source.replace(/["\\\n]/g, '_')}"} ${n}`);
    }
    out.push(
      '# HELP svcmaps_http_requests_in_flight Requests being handled now',
      '# TYPE svcmaps_http_requests_in_flight gauge',
      `svcmaps_http_requests_in_flight ${this.inflight}`,
    );
    return out;
  }
}
