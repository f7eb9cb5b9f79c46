/**
 * A routing thread (see route-pool.ts): one BuiltinEngine over the shared road graph, answering one query at a
 * time. The graph's arrays are views of the SharedArrayBuffer the main thread loaded, so every thread maps the same
 * memory; only the per-query search state (CHQuery) is the thread's own.
 */
import { workerData } from 'node:worker_threads';
import { serveTasks, type HostData } from '../../limits/worker-host.js';
import { BuiltinEngine } from '../builtin-engine.js';
import { AnswerSlab } from './answer-slab.js';
import { HelpDesk } from './route-help.js';
import { writeLeg } from '../answer/route-record.js';
import type { RouteAnswer, RouteInit, RouteTask } from './route-pool.js';

const answers = new AnswerSlab();

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
      if (r.kind !== 'ok') return r satisfies RouteAnswer;
      // One buffer with every path, which the HTTP thread copies out of this thread's slab: the route cache keeps it.
      return { kind: 'ok', leg: answers.hold((room) => writeLeg(engine.name, r.paths, room)) } satisfies RouteAnswer;
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
