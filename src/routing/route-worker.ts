/**
 * A routing thread (see route-pool.ts): one BuiltinEngine over the shared road graph, answering one query at a
 * time. The graph's arrays are views of the SharedArrayBuffer the main thread loaded, so every thread maps the same
 * memory; only the per-query search state (CHQuery) is the thread's own.
 */
import { workerData } from 'node:worker_threads';
import { serveTasks, type HostData } from '../limits/worker-host.js';
import { BuiltinEngine } from './builtin-engine.js';
import { HelpDesk } from './route-help.js';
import { encodeLeg } from './route-record.js';
import type { RouteAnswer, RouteInit, RouteTask } from './route-pool.js';

type State = { engine: BuiltinEngine; init: RouteInit; desk?: HelpDesk };
let current: State | undefined;

serveTasks<State>(
  (data, previous) => {
    const init = data as RouteInit;
    const engine = new BuiltinEngine(init.graph, { snapMaxMeters: init.snapMaxMeters });
    // the pool's shared words and channel names never change: a reload keeps the desk and gives it the new graph
    const desk = previous?.desk ?? (init.help && new HelpDesk(init.help, (workerData as HostData).slot, init.graph));
    desk?.use(init.graph);
    const state: State = (current = { engine, init, desk });
    // once the thread has said it is set up (a reload finds the code optimised already)
    if (!previous && init.warmRoutes) setImmediate(() => warmUp(state, init.warmRoutes!));
    return state;
  },
  (state, payload, check) => {
    const t = payload as RouteTask;
    if (state.init.testDelayMs) spin(state.init.testDelayMs, check);
    const r = answer(state, t, check);
    // One buffer with every path, moved to the HTTP thread rather than copied; it is what the route cache keeps.
    return (r.kind === 'ok' ? { kind: 'ok', leg: encodeLeg(state.engine.name, r.paths) } : r) satisfies RouteAnswer;
  },
  (a) => {
    const leg = (a as RouteAnswer).kind === 'ok' ? (a as { leg: Uint8Array }).leg : undefined;
    return leg ? [leg.buffer as ArrayBuffer] : [];
  },
);

/** One answer, with the other threads' help while this thread runs it (route-help.ts). */
function answer({ engine, desk }: State, t: RouteTask, check?: () => void) {
  desk?.running();
  try {
    return engine.routeSync(t.from, t.to, t, check, desk);
  } finally {
    desk?.idle();
  }
}

/** A warm-up stops once it has run this long (a thread on a busy machine still has its first queries soon). */
const WARM_UP_MAX_MS = 3000;

/**
 * Runs `routes` answers between graph nodes picked at random, long and local in turn, one per event-loop turn, so a
 * query that arrives meanwhile waits for one of them at most. Until V8 has optimised a thread's code, its answers
 * take longer and the compiling takes the other core: at 600 copies the first ~200 long routes after start cost ~1 ms
 * more helper-thread CPU each. The answers are the thread's own (no pool task, nothing cached); the paths they hand
 * over warm the other threads' writing too.
 */
function warmUp(state: State, routes: number): void {
  const g = state.engine.graph,
    nodes = g.lat.length;
  const until = performance.now() + WARM_UP_MAX_MS;
  let seed = 1 + (workerData as HostData).slot;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const at = (v: number) => ({ lat: g.lat[v]!, lng: g.lon[v]! });
  const step = (k: number) => {
    if (k >= routes || current !== state || !nodes || performance.now() > until) return;
    const a = Math.floor(rnd() * nodes),
      b = k % 2 ? Math.floor(rnd() * nodes) : Math.min(nodes - 1, a + Math.floor(rnd() * 200));
    const r = answer(state, {
      from: at(a),
      to: at(b),
      alternatives: 2,
      locale: k % 3 ? 'en' : 'ar',
      overview: 'simplified',
    });
    if (r.kind === 'ok') encodeLeg(state.engine.name, r.paths);
    setImmediate(() => step(k + 1));
  };
  step(0);
}

/** Test hook: busy for `ms` the way a long search is (CPU-bound, checking its cancel word as it goes). */
function spin(ms: number, check: () => void): void {
  const until = performance.now() + ms;
  while (performance.now() < until) check();
}
