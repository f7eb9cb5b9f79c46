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

serveTasks<{ engine: BuiltinEngine; init: RouteInit; desk?: HelpDesk }>(
  (data, previous) => {
    const init = data as RouteInit;
    const engine = new BuiltinEngine(init.graph, { snapMaxMeters: init.snapMaxMeters });
    // the pool's shared words and channel names never change: a reload keeps the desk and gives it the new graph
    const desk = previous?.desk ?? (init.help && new HelpDesk(init.help, (workerData as HostData).slot, init.graph));
    desk?.use(init.graph);
    return { engine, init, desk };
  },
  ({ engine, init, desk }, payload, check) => {
    const t = payload as RouteTask;
    desk?.running();
    try {
      if (init.testDelayMs) spin(init.testDelayMs, check);
      const r = engine.routeSync(t.from, t.to, t, check, desk);
      // One buffer with every path, copied to the HTTP thread (worker-host.ts); it is what the route cache keeps.
      return (r.kind === 'ok' ? { kind: 'ok', leg: encodeLeg(engine.name, r.paths) } : r) satisfies RouteAnswer;
    } finally {
      desk?.idle();
    }
  },
);

/** Test hook: busy for `ms` the way a long search is (CPU-bound, checking its cancel word as it goes). */
function spin(ms: number, check: () => void): void {
  const until = performance.now() + ms;
  while (performance.now() < until) check();
}
