import { Counter, Gauge } from 'prom-client';
import type { Admission, Lane } from '../limits/admission.js';
import type { WorkerPoolStats } from '../limits/worker-pool.js';
import type { MetricsRegistry } from './metrics.js';

/**
 * The engine thread pools by engine name (routing, places, render), read at every scrape from whoever owns them then:
 * a reload may swap the engine, and a pool that is not running (no graph, no index, upstream engine) is undefined.
 */
export type EnginePools = () => Record<string, WorkerPoolStats | undefined>;

/** An engine's pool occupancy when it runs threads: such engines expose `stats` (limits/worker-pool.ts's shape). */
export const poolStatsOf = (engine: unknown): WorkerPoolStats | undefined =>
  (engine as { stats?: WorkerPoolStats } | undefined)?.stats;

type Labels = Record<string, string>;

/**
 * Engine threads (limits/worker-pool.ts, render/worker-pool.ts) and render admission control (limits/admission.ts)
 * as Prometheus series. Like every other svcmaps metric they are read when scraped: the pools and admissions keep
 * plain counters, and nothing on the request path calls prom-client. Counters are set from those running totals.
 */
export function registerEngineMetrics(registry: MetricsRegistry, engines: EnginePools, admissions: Admission[]): void {
  const registers = [registry];
  const pools = (): Array<[string, WorkerPoolStats]> =>
    Object.entries(engines()).filter((e): e is [string, WorkerPoolStats] => e[1] !== undefined);
  /** One series per running pool, set at scrape time (a pool that stopped takes its series with it). */
  const engineSeries = (kind: 'gauge' | 'counter', name: string, help: string, value: (s: WorkerPoolStats) => number) =>
    series(kind, name, help, ['engine'], function* () {
      for (const [engine, s] of pools()) yield [{ engine }, value(s)];
    });
  const series = (
    kind: 'gauge' | 'counter',
    name: string,
    help: string,
    labelNames: string[],
    read: () => Iterable<[Labels, number]>,
  ) => {
    const config = { name, help, labelNames, registers };
    if (kind === 'gauge')
      new Gauge({
        ...config,
        collect() {
          this.reset();
          for (const [labels, v] of read()) this.set(labels, v);
        },
      });
    else
      new Counter({
        ...config,
        collect() {
          this.reset();
          for (const [labels, v] of read()) this.inc(labels, v);
        },
      });
  };

  engineSeries('gauge', 'svcmaps_engine_threads', 'Threads of an engine pool (routing, places, render)', (s) => s.size);
  engineSeries('gauge', 'svcmaps_engine_tasks_active', 'Engine tasks on a thread now', (s) => s.active);
  engineSeries('gauge', 'svcmaps_engine_tasks_queued', 'Engine tasks waiting for a thread', (s) => s.queued);
  engineSeries('counter', 'svcmaps_engine_tasks_completed_total', 'Engine tasks a thread answered', (s) => s.completed);
  series(
    'counter',
    'svcmaps_engine_tasks_helped_total',
    "Parts of engine tasks written by another thread than the task's (routing: paths of a route answer)",
    ['engine'],
    function* () {
      for (const [engine, s] of pools()) if (s.helped !== undefined) yield [{ engine }, s.helped];
    },
  );
  series(
    'counter',
    'svcmaps_engine_tasks_inline_total',
    'Engine tasks run on the calling thread instead (routing: short routes while the HTTP thread is free), by outcome: ' +
      'answered there, or handed on to a pool thread after running over budget',
    ['engine', 'outcome'],
    function* () {
      for (const [engine, s] of pools())
        if (s.inline) {
          yield [{ engine, outcome: 'answered' }, s.inline.answered];
          yield [{ engine, outcome: 'handed_on' }, s.inline.handedOn];
        }
    },
  );
  engineSeries(
    'counter',
    'svcmaps_engine_tasks_shed_total',
    'Engine tasks refused at once because the pool queue was full (*_BACKPRESSURE)',
    (s) => s.shed,
  );
  series(
    'counter',
    'svcmaps_engine_tasks_abandoned_total',
    'Engine tasks dropped or abandoned, by reason: deadline passed, or requester gone (aborted)',
    ['engine', 'reason'],
    function* () {
      for (const [engine, s] of pools()) {
        yield [{ engine, reason: 'deadline' }, s.expired];
        yield [{ engine, reason: 'aborted' }, s.aborted];
      }
    },
  );
  engineSeries(
    'counter',
    'svcmaps_engine_threads_replaced_total',
    'Engine threads terminated and replaced (stuck past a cancel, or crashed)',
    (s) => s.replaced,
  );

  const perAdmission = function* (value: (a: Admission) => number): Iterable<[Labels, number]> {
    for (const a of admissions) yield [{ admission: a.name }, value(a)];
  };
  const perLane = function* (value: (a: Admission, lane: Lane) => number): Iterable<[Labels, number]> {
    for (const a of admissions) for (const lane of a.lanes) yield [{ admission: a.name, lane }, value(a, lane)];
  };
  series('gauge', 'svcmaps_admission_slots', 'Jobs a render admission control runs at once', ['admission'], () =>
    perAdmission((a) => a.concurrency),
  );
  series('gauge', 'svcmaps_admission_in_flight', 'Jobs running under a render admission control', ['admission'], () =>
    perAdmission((a) => a.active),
  );
  series(
    'gauge',
    'svcmaps_admission_job_seconds',
    'Recent job time: moving average over completions, at least the youngest running job while every slot is busy',
    ['admission'],
    () => perAdmission((a) => a.serviceMs() / 1000),
  );
  series('gauge', 'svcmaps_admission_queued', 'Jobs waiting for a render slot, by lane', ['admission', 'lane'], () =>
    perLane((a, lane) => a.queued(lane)),
  );
  series(
    'gauge',
    'svcmaps_admission_predicted_wait_seconds',
    'Predicted wait of a job entering the lane now (0 until a few jobs per slot were measured)',
    ['admission', 'lane'],
    () => perLane((a, lane) => a.predictedWaitMs(lane) / 1000),
  );
  series('counter', 'svcmaps_admission_started_total', 'Jobs started, by lane', ['admission', 'lane'], () =>
    perLane((a, lane) => a.stats[lane].started),
  );
  series(
    'counter',
    'svcmaps_admission_shed_total',
    'Jobs not run, by lane and reason: refused at once (full queue, late: predicted to miss their wait budget) or dropped while queued (expired, gone)',
    ['admission', 'lane', 'reason'],
    function* () {
      for (const a of admissions)
        for (const lane of a.lanes)
          for (const reason of ['full', 'late', 'expired', 'gone'] as const)
            yield [{ admission: a.name, lane, reason }, a.stats[lane][reason]] as [Labels, number];
    },
  );
}
