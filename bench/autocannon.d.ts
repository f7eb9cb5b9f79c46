/** The slice of autocannon's programmatic API the benchmark uses (the package ships no type declarations). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
      [percentile: string]: number;
    }
    interface Options {
      url: string;
      headers?: Record<string, string>;
      connections?: number;
      pipelining?: number;
      duration?: number;
      timeout?: number;
      method?: string;
      requests?: { method?: string; path?: string; headers?: Record<string, string> }[];
    }
    interface Result {
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      statusCodeStats?: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
      throughput: Histogram;
    }
    interface Instance extends EventEmitter, PromiseLike<Result> {
      stop(): void;
    }
  }

  function autocannon(opts: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
