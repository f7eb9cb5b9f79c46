/**
 * A small Prometheus registry (text exposition format 0.0.4). Any module may record into it:
 *   metrics.inc('svcmaps_tiles_stored_total', { zoom: 12 })
 *   metrics.observe('svcmaps_tile_render_seconds', { zoom: 12 }, 0.021)
 *   metrics.gauge('svcmaps_hot_tier_bytes', () => hot.bytes)
 * Series are created on first use and looked up by a label key afterwards, so recording costs a map lookup and an
 * increment. The request path uses `RequestMetrics` (below) which avoids even building the label key.
 */
export type Labels = Record<string, string | number>;

/** Latency buckets in seconds: 1 ms to 10 s, enough resolution for a cache hit and for a cold render. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
export const labelText = (l: Labels): string => {
  const keys = Object.keys(l);
  return keys.length ? `{${keys.map((k) => `${k}="${esc(String(l[k]))}"`).join(',')}}` : '';
};
const num = (n: number) => (Number.isFinite(n) ? String(n) : n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN');

/** One histogram series: cumulative counts are computed at scrape time, so observing touches a single slot. */
export class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly buckets: number[] = LATENCY_BUCKETS) {
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
  lines(name: string, labels: string): string[] {
    const inner = labels ? labels.slice(1, -1) + ',' : '';
    const out: string[] = [];
    let cum = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      cum += this.counts[i]!;
      out.push(`${name}_bucket{${inner}le="${this.buckets[i]}"} ${cum}`);
    }
    out.push(
      `${name}_bucket{${inner}le="+Inf"} ${this.count}`,
      `${name}_sum${labels} ${num(this.sum)}`,
      `${name}_count${labels} ${this.count}`,
    );
    return out;
  }
}

type Family =
  | { type: 'counter'; help: string; series: Map<string, { labels: string; value: number }> }
  | {
      type: 'gauge';
      help: string;
      series: Map<string, { labels: string; value: number }>;
      collect?: () => Array<[Labels, number]>;
    }
  | { type: 'histogram'; help: string; buckets: number[]; series: Map<string, { labels: string; h: Histogram }> };

export class MetricsRegistry {
  private readonly families = new Map<string, Family>();
  private readonly collectors: Array<() => string[]> = [];

  describe(name: string, type: Family['type'], help: string, buckets?: number[]): void {
    if (this.families.has(name)) return;
    this.families.set(
      name,
      type === 'histogram'
        ? { type, help, buckets: buckets ?? LATENCY_BUCKETS, series: new Map() }
        : ({ type, help, series: new Map() } as Family),
    );
  }

  private family(name: string, type: Family['type']): Family {
    let f = this.families.get(name);
    if (!f) {
      this.describe(name, type, name.replace(/_/g, ' '));
      f = this.families.get(name)!;
    }
    if (f.type !== type) throw new Error(`metric ${name} is a ${f.type}, not a ${type}`);
    return f;
  }

  inc(name: string, labels: Labels = {}, by = 1): void {
    const f = this.family(name, 'counter') as Extract<Family, { type: 'counter' }>;
    const key = labelText(labels);
    const s = f.series.get(key);
    if (s) s.value += by;
    else f.series.set(key, { labels: key, value: by });
  }

  set(name: string, labels: Labels, value: number): void {
    const f = this.family(name, 'gauge') as Extract<Family, { type: 'gauge' }>;
    const key = labelText(labels);
    f.series.set(key, { labels: key, value });
  }

  /** A gauge read at scrape time (pool occupancy, cache size): nothing is recorded on the hot path. */
  gauge(name: string, help: string, collect: () => Array<[Labels, number]> | number): void {
    this.describe(name, 'gauge', help);
    const f = this.families.get(name) as Extract<Family, { type: 'gauge' }>;
    f.collect = () => {
      const v = collect();
      return typeof v === 'number' ? [[{}, v]] : v;
    };
  }

  observe(name: string, labels: Labels, value: number): void {
    const f = this.family(name, 'histogram') as Extract<Family, { type: 'histogram' }>;
    const key = labelText(labels);
    let s = f.series.get(key);
    if (!s) f.series.set(key, (s = { labels: key, h: new Histogram(f.buckets) }));
    s.h.observe(value);
  }

  /** Extra exposition lines produced by a component at scrape time (used by RequestMetrics). */
  addCollector(c: () => string[]): void {
    this.collectors.push(c);
  }

  render(): string {
    const out: string[] = [];
    for (const [name, f] of this.families) {
      out.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`);
      if (f.type === 'histogram') for (const s of f.series.values()) out.push(...s.h.lines(name, s.labels));
      else {
        for (const s of f.series.values()) out.push(`${name}${s.labels} ${num(s.value)}`);
        if (f.type === 'gauge' && f.collect) {
          try {
            for (const [l, v] of f.collect()) out.push(`${name}${labelText(l)} ${num(v)}`);
          } catch {
            /* a failing probe must not break the scrape */
          }
        }
      }
    }
    for (const c of this.collectors) out.push(...c());
    return out.join('\n') + '\n';
  }
}
