import { createServer, type Server } from 'node:http';
import type { Route } from '../http/router.js';
import type { MetricsRegistry } from './metrics.js';

/** GET /admin/metrics on the main port, for super_admin keys (every /admin route requires one). */
export function metricsRoute(registry: MetricsRegistry): Route {
  return {
    method: 'GET',
    pattern: '/admin/metrics',
    surface: 'admin',
    handler: async () => ({
      status: 200,
      // The Prometheus text format 0.0.4: text/plain; version=0.0.4; charset=utf-8
      headers: { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' },
      body: await registry.metrics(),
    }),
  };
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The separate admin port (config metrics.port, bound to metrics.host, 127.0.0.1 by default): /metrics without
 * credentials, for a Prometheus scraper on the same host or network. Scrapes are rare, so plain node:http does.
 */
export function listenMetrics(registry: MetricsRegistry, host: string, port: number): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && (req.url === '/metrics' || req.url?.startsWith('/metrics?'))) {
      registry.metrics().then(
        (body) => res.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(body),
        (e: unknown) =>
          res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`metrics unavailable: ${(e as Error).message}\n`),
      );
    } else res.writeHead(404, { 'Content-Type': 'text/plain' }).end('only /metrics is served here\n');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const addr = server.address();
      const p = typeof addr === 'object' && addr ? addr.port : port;
      resolve({
        url: `http://${host.includes(':') ? `[${host}]` : host}:${p}/metrics`,
        close: () =>
          new Promise((r) => {
            server.close(() => r());
            server.closeAllConnections(); // scrapers keep connections alive; shutdown must not wait for them
          }),
      });
    });
  });
}
