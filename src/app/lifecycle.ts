import type { App } from '../app.js';
import type { AnswerCache } from '../cache/answer-cache.js';
import { listen, type RunningServer } from '../http/uws/server.js';
import { listenMetrics, type MetricsServer } from '../ops/metrics-http.js';
import type { Stores } from './stores.js';
import type { Places } from './places.js';
import type { Routing } from './routing.js';
import type { Tiles } from './tiles.js';

/** What close() stops besides the servers. */
interface Parts {
  /** Aborted by close(): the background start-up loads stop waiting and drop what they load. */
  closing: AbortController;
  stores: Stores;
  answers: AnswerCache;
  places: Places;
  routing: Routing;
  tiles: Tiles;
}

/** The built app with its servers: listen() opens them, shutdown() drains them, close() stops everything. */
export function withLifecycle(built: Omit<App, 'listen' | 'shutdown' | 'close' | 'metricsServer'>, p: Parts): App {
  const { config, pipeline, metrics, requests, reloads } = built;
  const { cluster, auth, meter, db } = p.stores;
  let server: RunningServer | undefined;
  let metricsServer: MetricsServer | undefined;
  const app: App = {
    ...built,
    async shutdown(graceMs = config.http.shutdown_grace_ms) {
      server?.close();
      server = undefined;
      const until = Date.now() + graceMs;
      while (requests.inflight > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setImmediate(r)); // the last reply is written before the store closes
      app.close();
    },
    async listen() {
      await cluster?.start((id) => auth.invalidateKey(id));
      const tls = config.tls.cert || config.tls.key ? config.tls : undefined;
      server = await listen(pipeline, {
        host: config.host,
        port: config.port,
        tls,
        clientIpHeader: config.http.trusted_proxy_header || undefined,
      });
      if (config.metrics.port > 0 && !metricsServer) {
        metricsServer = await listenMetrics(metrics, config.metrics.host, config.metrics.port);
        app.metricsServer = metricsServer;
      }
      return server;
    },
    close() {
      if (p.closing.signal.aborted) return;
      p.closing.abort();
      server?.close();
      server = undefined;
      void metricsServer?.close();
      reloads.closeAll();
      // The meter and the answer cache flush into svcmaps.db (or the cluster) as they stop: the stores close last.
      meter.stop();
      p.answers.stop();
      p.places.close();
      p.routing.close();
      p.tiles.close();
      db.close();
      void cluster?.close();
    },
  };
  return app;
}
