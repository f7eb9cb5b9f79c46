/**
 * A routing thread (see route-pool.ts): one BuiltinEngine over the shared road graph, answering one query at a
 * time. The graph's arrays are views of the SharedArrayBuffer the main thread loaded, so every thread maps the same
 * memory; only the per-query search state (CHQuery) is the thread's own.
 */
import { serveTasks } from '../limits/worker-host.js';
import { BuiltinEngine } from './builtin-engine.js';
import { encodeLeg } from './route-record.js';
import type { RouteAnswer, RouteInit, RouteTask } from './route-pool.js';

serveTasks<{ engine: BuiltinEngine; init: RouteInit }>(
  (data) => {
    const init = data as RouteInit;
    return { engine: new BuiltinEngine(init.graph, { snapMaxMeters: init.snapMaxMeters }), init };
  },
  ({ engine, init }, payload, check) => {
    const t = payload as RouteTask;
    if (init.testDelayMs) spin(init.testDelayMs, check);
    const r = engine.routeSync(t.from, t.to, t, check);
    // One buffer with every path, moved to the HTTP thread rather than copied; it is what the route cache keeps.
    return (r.kind === 'ok' ? { kind: 'ok', leg: encodeLeg(engine.name, r.paths) } : r) satisfies RouteAnswer;
  },
  (a) => {
    const leg = (a as RouteAnswer).kind === 'ok' ? (a as { leg: Uint8Array }).leg : undefined;
    return leg ? [leg.buffer as ArrayBuffer] : [];
  },
);

/** Test hook: busy for `ms` the way a long search is (CPU-bound, checking its cancel word as it goes). */
function spin(ms: number, check: () => void): void {
  const until = performance.now() + ms;
  while (performance.now() < until) check();
}
