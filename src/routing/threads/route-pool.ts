import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import type { LatLng } from '../../core/geo.js';
import { takeAnswer, type SharedLeg } from './answer-slab.js';
import { isTaskAbandoned, WorkerPool, type WorkerPoolStats } from '../../limits/worker-pool.js';
import type { RoadGraph } from '../road-graph.js';
import { helpWords, pathsShared, type HelpInit } from './route-help.js';
import { decodeLeg } from '../answer/route-record.js';
import type { InlineRouter } from './route-inline.js';
import type { EngineResult, RouteOptions, RoutingEngine, WarmUpReport } from '../types.js';

/** What every routing thread starts with: the shared graph (typed arrays over one SharedArrayBuffer) and options. */
export interface RouteInit {
  graph: RoadGraph;
  snapMaxMeters: number;
  /** Test hook only: each query first keeps its thread busy this long (abandonable), standing in for a slow route. */
  testDelayMs?: number;
  /** How the threads write each other's paths (route-help.ts); absent with one thread. */
  help?: HelpInit;
}

export interface RouteTask extends Pick<RouteOptions, 'alternatives' | 'locale' | 'overview'> {
  from: LatLng;
  to: LatLng;
}

const ROUTING_NICE = 15;
/**
 * A warm-up (PooledRouter.warmUp) stops after this long, done or not: a busy machine still gets its answers soon.
 * At 600 copies 3 s ran ~840 of the 1,200 routes; the rest take ~1.5 s more.
 */
const WARM_UP_MAX_MS = 6000;

/**
 * Then the HTTP thread answers routes of 2-5 km itself: this many for each route of the routing threads' warm-up,
 * for at most INLINE_WARM_UP_MAX_MS more (see PooledRouter.warmInline; 3,000 routes took ~1.2 s at 600 copies).
 */
export const INLINE_WARM_UP_SHARE = 2.5;
const INLINE_WARM_UP_MAX_MS = 3000;

/** A routing thread's answer: the paths in one buffer (route-record.ts encodeLeg), in the thread's answer slab. */
export type RouteAnswer = { kind: 'ok'; leg: SharedLeg } | { kind: 'unroutable' };

export interface PooledRouterOptions {
  snapMaxMeters: number;
  /** Routing threads; 0 = os.availableParallelism(). */
  threads: number;
  /** Queries that may wait for a thread; one more is refused with DIRECTIONS_BACKPRESSURE. */
  queue: number;
  /** A query still unanswered this long after it was asked is abandoned (the caller degrades to the straight line). */
  timeoutMs: number;
  /** Test hook only (see RouteInit.testDelayMs); never set from config. */
  testDelayMs?: number;
  /** false: every thread writes its own paths (route-help.ts), for comparisons. */
  help?: boolean;
  /** Test hook only (see HelpInit.minPieces). */
  testHandOverMinPieces?: number;
  /** Routes whose ends are at most this far apart run on the calling thread when it is free (route-inline.ts); 0: never. */
  inlineMaxKm?: number;
  /** Test hook only: an inline search gives up after this long (default INLINE_BUDGET_MS). */
  testInlineBudgetMs?: number;
}

/** An inline search still running after this long gives up and goes to the routing threads. */
const INLINE_BUDGET_MS = 3;

/**
 * The built-in router off the event loop: queries run in a pool of routing threads that all map the one road
 * graph the main thread loaded into a SharedArrayBuffer. A query carries its deadline and the requester's
 * AbortSignal into the pool (limits/worker-pool.ts), so it is dropped or abandoned mid-search once nobody can use
 * its answer. Threads start with the first `start()` or query; `adopt` swaps a freshly loaded graph into every
 * running thread (reload) instead of starting new ones.
 */
export class PooledRouter implements RoutingEngine {
  readonly name = 'svc';
  readonly local = true;
  private pool: WorkerPool | undefined;
  private closed = false;
  private help: HelpInit | undefined;
  /** Loaded with the threads, not with this module: it brings the whole router to the HTTP thread (~18 ms to load). */
  private inline: InlineRouter | undefined;
  private inlineLoad: Promise<void> | undefined;
  /** Real queries under way: the warm-up waits while there is one (see warmUp). */
  private real = 0;
  /** Warm-up loops waiting for the real queries to end. */
  private quietWaiters: (() => void)[] = [];
  /** Cancels the warm-up's queries in the routing threads when a real query comes (see warmUp). */
  private warmAbort: AbortController | undefined;
  /** Warm-up queries that failed (abandoned for a real query, mostly), reported once at the end of the warm-up. */
  private warmFailures = { count: 0, last: '' };

  constructor(
    private graph: RoadGraph,
    private readonly opts: PooledRouterOptions,
  ) {}

  get version(): string {
    return this.graph.meta.buildId;
  }

  get meta(): RoadGraph['meta'] {
    return this.graph.meta;
  }

  get threads(): number {
    return this.opts.threads > 0 ? this.opts.threads : availableParallelism();
  }

  /**
   * Thread and queue occupancy, the paths one thread wrote for another's answer, and the queries answered on the
   * calling thread, for metrics and tests.
   */
  get stats(): WorkerPoolStats | undefined {
    const s = this.pool?.stats;
    const inline = { answered: 0, handedOn: 0, ...this.inline?.counts };
    return s && { ...s, helped: this.help ? pathsShared(this.help.words) : 0, inline };
  }

  start(): void {
    if (this.pool) return; // called by every query: started once
    // a query the test hook slows down stands for a long route: it never runs inline
    const maxKm = this.opts.testDelayMs ? 0 : (this.opts.inlineMaxKm ?? 0);
    if (maxKm > 0)
      this.inlineLoad = import('./route-inline.js').then((m) => {
        const budgetMs = this.opts.testInlineBudgetMs ?? INLINE_BUDGET_MS;
        this.inline = new m.InlineRouter(this.opts.snapMaxMeters, maxKm, budgetMs);
      });
    this.pool = new WorkerPool({
      name: 'routing',
      here: import.meta.url,
      module: 'route-worker',
      size: this.threads,
      queue: this.opts.queue,
      shedCode: 'DIRECTIONS_BACKPRESSURE',
      timeoutMs: this.opts.timeoutMs,
      init: this.init(),
      // Lower than the places threads' 8: a long route is milliseconds of CPU per request. bench:mixed, hot tile
      // beside a route stream: 0.44-0.52x of alone at nice 8, 0.53-0.57x at 15 (route answers' p99 under that
      // load 30 -> 45 ms). On a machine with an idle core it changes nothing. Threads are not pinned to CPUs: pinned
      // (taskset), a helper was never woken onto its asker's CPU (lone long routes p50 x0.98), but beside a hot-tile
      // load a routing thread could not leave the CPU the HTTP thread ran on (bench:mixed route p99 40 -> 59-88 ms).
      nice: ROUTING_NICE,
    });
  }

  /**
   * Starts the threads and resolves once one of them has set its engine up over the graph (its search state
   * allocated), or after `maxWaitMs` when none manages to (each query then reports the thread's setup error).
   * With `every`, once all of them have (see RoutingEngine.whenWarm).
   */
  async whenReady(maxWaitMs = 60_000, every = false): Promise<boolean> {
    this.start();
    await this.inlineLoad;
    const until = performance.now() + maxWaitMs;
    while (!this.pool!.ready || (every && this.pool!.starting)) {
      if (this.closed || performance.now() > until) return false;
      await new Promise((r) => setTimeout(r, 5));
    }
    return true;
  }

  whenWarm(): Promise<boolean> {
    return this.whenReady(60_000, true);
  }

  /**
   * Up to `routes` routes between road nodes picked at random, local (nearby node ids are nearby roads: locality.ts)
   * and across the graph in turn, both locales, some with the full line, one query per thread at a time and for at
   * most `maxMs`. Until V8 has compiled and optimised the routing code, answers take longer and the compiling takes
   * the other core: at 600 copies the first ~200 long routes after start cost ~1 ms more each. The first half runs
   * one query per thread, the second one query at a time, so the idle threads lend a hand (route-help.ts) as on a
   * quiet server, and that code is compiled too (with every thread busy, nobody is asked). The warm-up yields to
   * every real query: one that comes cancels the warm-up queries running in the threads (they stop at their next
   * cancel check, as an abandoned query does), and no warm-up query starts while a real one is under way, so a real
   * query never waits behind the warm-up. The answers go nowhere (not to the route cache); they count in the routing
   * threads' metrics like any query. Then the HTTP thread's own phase (warmInline), for at most as long again
   * (INLINE_WARM_UP_MAX_MS at most). Returns what the warm-up ran and how many of its queries failed.
   */
  async warmUp(routes: number, maxMs = WARM_UP_MAX_MS): Promise<WarmUpReport> {
    const ran = await this.warmUpRuns(routes, maxMs);
    const { count, last } = this.warmFailures;
    this.warmFailures = { count: 0, last: '' };
    return { routes: ran, failed: count, lastError: last };
  }

  private async warmUpRuns(routes: number, maxMs: number): Promise<number> {
    const g = this.graph,
      nodes = g.lat.length;
    if (routes <= 0 || nodes < 2) return 0;
    const until = performance.now() + maxMs;
    let seed = 20261126,
      left = routes,
      ran = 0;
    const rnd = () => (seed = Math.imul(seed, 48271) >>> 0) / 2 ** 32;
    const node = (v: number) => ({ lat: g.lat[v]!, lng: g.lon[v]! });
    const one = async (downTo: number) => {
      while (left > downTo && !this.closed && performance.now() < until) {
        if (this.real > 0) {
          await this.quiet(until);
          continue;
        }
        const k = left--;
        ran++;
        const u = Math.floor(rnd() * nodes);
        const v = k % 2 ? Math.floor(rnd() * nodes) : Math.min(nodes - 1, u + Math.floor(rnd() * 2000));
        // local ones may run on this thread as a quiet server's would (route-inline.ts), so its code warms up too
        const opts = {
          alternatives: 2,
          locale: k % 4 < 2 ? 'en' : 'ar',
          overview: k % 5 ? 'simplified' : 'full',
          inline: k % 2 === 0,
        } as const;
        await this.warmQuery(node(u), node(v), opts);
      }
    };
    await Promise.all(Array.from({ length: this.threads }, () => one(Math.floor(routes / 2))));
    await one(0);
    const inline = Math.round(routes * INLINE_WARM_UP_SHARE);
    return ran + (await this.warmInline(inline, Math.min(maxMs, INLINE_WARM_UP_MAX_MS), node, rnd));
  }

  /** One warm-up query, cancelled if a real one comes; a failure is counted (warmUp reports them). */
  private async warmQuery(from: LatLng, to: LatLng, opts: RouteOptions): Promise<void> {
    if (!this.warmAbort || this.warmAbort.signal.aborted) this.warmAbort = new AbortController();
    const abort = this.warmAbort;
    try {
      await this.query(from, to, { ...opts, signal: abort.signal });
    } catch (e) {
      this.warmFailures.count++;
      this.warmFailures.last = (e as Error)?.message ?? String(e);
    } finally {
      if (abort.signal.aborted && this.warmAbort === abort) this.warmAbort = undefined;
    }
  }

  /** Resolves once no real query is under way, or at `until` (performance.now()), or when the engine closes. */
  private quiet(until: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, until - performance.now()));
      this.quietWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Routes of 2-5 km on this thread, one per turn of the event loop, from a road node to a point in a random
   * direction. V8 optimises a function once it has run enough, isolate by isolate, and a function called once a
   * route (the search, a path's builder) has to run a few thousand times first. After the routing threads' warm-up
   * (a quarter of its routes on this thread, mostly pairs a few node ids apart that find no alternative), the HTTP
   * thread still ran its routing code as baseline code through the first ~1,000-2,000 local routes clients asked: at
   * 600 copies `search` was still baseline code 6 s after its first call, 20-26 functions were optimised during the
   * first 300 local routes after 300 long ones, and local answers went from ~1.1 to ~0.7 ms over 1,800 of them. With
   * this phase: 6 functions during those 300 (the HTTP pipeline's, which any traffic warms), none of the routing code.
   */
  private async warmInline(
    routes: number,
    maxMs: number,
    node: (v: number) => LatLng,
    rnd: () => number,
  ): Promise<number> {
    const nodes = this.graph.lat.length;
    const until = performance.now() + maxMs;
    let k = 0;
    for (; k < routes && this.inline && !this.closed && performance.now() < until; k++) {
      if (this.real > 0) await this.quiet(until);
      const from = node(Math.floor(rnd() * nodes));
      const km = 2 + 3 * rnd(),
        angle = 2 * Math.PI * rnd();
      const to = {
        lat: from.lat + (km * Math.cos(angle)) / 111.2,
        lng: from.lng + (km * Math.sin(angle)) / (111.2 * Math.cos((from.lat * Math.PI) / 180)),
      };
      const opts = { alternatives: 2, locale: k % 2 ? 'en' : 'ar', overview: 'simplified', inline: true } as const;
      await this.warmQuery(from, to, opts);
      await new Promise((r) => setImmediate(r)); // the event loop turns between two routes
    }
    return k;
  }

  /** A real query: the warm-up's running queries give way to it (see warmUp). */
  async route(from: LatLng, to: LatLng, opts: RouteOptions): Promise<EngineResult> {
    this.real++;
    this.warmAbort?.abort();
    try {
      return await this.query(from, to, opts);
    } finally {
      if (--this.real === 0) for (const wake of this.quietWaiters.splice(0)) wake();
    }
  }

  private async query(from: LatLng, to: LatLng, opts: RouteOptions): Promise<EngineResult> {
    this.start();
    if (opts.inline && this.inline?.fits(from, to)) {
      const here = this.inline.route(this.graph, from, to, opts);
      if (here) return here;
    }
    const task: RouteTask = { from, to, alternatives: opts.alternatives, locale: opts.locale, overview: opts.overview };
    try {
      const a = await this.pool!.run<RouteAnswer>(task, { signal: opts.signal });
      if (a.kind !== 'ok') return a;
      const encoded = takeAnswer(a.leg);
      const leg = decodeLeg(encoded);
      if (!leg) throw new Error('routing thread answered an unreadable leg');
      return { kind: 'ok', paths: leg.paths, encoded };
    } catch (e) {
      if (isTaskAbandoned(e)) throw new Error(`route query abandoned (${e.reason})`, { cause: e });
      throw e;
    }
  }

  /**
   * Reload: takes `next`'s graph into this engine's running threads (each swaps it in before its next query) and
   * answers true; false when there is nothing to swap into (no threads yet, or `next` is another kind of engine).
   */
  adopt(next: RoutingEngine): boolean {
    if (!(next instanceof PooledRouter) || !this.pool || next.pool) return false;
    this.graph = next.graph;
    void this.pool.update(this.init());
    return true;
  }

  close(): void {
    this.closed = true;
    for (const wake of this.quietWaiters.splice(0)) wake();
    this.pool?.close();
  }

  private init(): RouteInit {
    const threads = this.threads;
    this.help ??=
      threads > 1 && this.opts.help !== false
        ? {
            words: helpWords(threads),
            channel: `svcmaps-route-help-${randomUUID()}`,
            minPieces: this.opts.testHandOverMinPieces,
          }
        : undefined;
    return {
      graph: this.graph,
      snapMaxMeters: this.opts.snapMaxMeters,
      testDelayMs: this.opts.testDelayMs,
      help: this.help,
    };
  }
}
