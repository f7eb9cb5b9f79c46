import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { createApp } from '../app.js';
import { jsonLogger } from '../ops/log.js';
import { ensurePlacesDb } from '../places/load.js';
import { prepareDataDir } from '../store/data-dir.js';
import { CliError, processIo, type Io } from './io.js';
import { commandConfig, portNumber } from './options.js';
import { removePidFile, writePidFile, writeReloadStatus } from '../ops/pidfile.js';
import { DataDirInUse, lockDataDir, type ServerLock } from '../store/server-lock.js';
import { hugePagesHint } from '../ops/huge-pages.js';
import { GRAPH_FILE } from '../routing/graph.js';

export function makeServeCommand(io: Io, signals: NodeJS.EventEmitter = process): CommandUnknownOpts {
  return new Command('serve')
    .description('serve the maps API (creates the data directory on first run)')
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--port <port>', 'port to listen on (0 picks a free one)', portNumber)
    .option('--host <host>', 'address to bind')
    .option('--config <file>', 'config file (JSON)')
    .option('--tls-cert <file>', 'TLS certificate (PEM); serve HTTPS natively')
    .option('--tls-key <file>', 'TLS private key (PEM)')
    .option('--public-url <url>', 'absolute base URL used in style JSON (e.g. https://maps.example.com)')
    .action(async (o) => {
      if (Boolean(o.tlsCert) !== Boolean(o.tlsKey)) throw new CliError('--tls-cert and --tls-key go together');
      const flags: Record<string, unknown> = {};
      if (o.port !== undefined) flags.port = o.port;
      if (o.host) flags.host = o.host;
      if (o.publicUrl !== undefined) flags.public_url = String(o.publicUrl).replace(/\/+$/, '');
      if (o.tlsCert) flags.tls = { cert: o.tlsCert, key: o.tlsKey };
      const config = commandConfig(io, o, flags);
      // One server per data directory, decided before anything in it is touched: a second server would share the
      // socket, double every key's limits and take over the pid file.
      let lock: ServerLock;
      try {
        lock = lockDataDir(prepareDataDir(config.data_dir).root);
      } catch (e) {
        if (e instanceof DataDirInUse) throw new CliError(e.message);
        throw e;
      }
      // The process's stderr gets the asynchronous destination; a captured Io gets every line as it is logged.
      const log = jsonLogger('info', io === processIo ? undefined : io.err);
      const places = await ensurePlacesDb(prepareDataDir(config.data_dir).root);
      if (places === 'upgraded')
        log.warn(
          'places index was of an older layout: set aside and replaced by the embedded gazetteer; run your imports again',
        );
      else if (places !== 'present') log.info('embedded gazetteer installed in the data directory', { how: places });
      const app = createApp(config, { log });
      let server;
      try {
        server = await app.listen();
      } catch (e) {
        app.close();
        lock.release();
        throw new CliError((e as Error).message);
      }
      const root = prepareDataDir(config.data_dir).root;
      // SIGHUP (or `svcmaps reload`, which sends it) re-opens imported data; the outcome is logged and left in the
      // data directory for the reload command to report.
      const onHup = () =>
        void app
          .reload()
          .then((results) => {
            writeReloadStatus(root, results);
            log.info('reloaded imported data', { results });
          })
          .catch((e) => log.error('reload failed', { error: (e as Error).message }));
      signals.on('SIGHUP', onHup);
      const hint = hugePagesHint(statSync(join(root, GRAPH_FILE), { throwIfNoEntry: false })?.size ?? 0, process.env);
      if (hint) log.info(hint);
      writePidFile(root, { pid: process.pid, url: server.url, started_at: new Date().toISOString() });
      if (app.metricsServer) io.out(`metrics on ${app.metricsServer.url}\n`);
      io.out(`svcmaps listening on ${server.url} (data: ${config.data_dir})\n`);
      if (config.console.enabled) io.out(`console on ${config.public_url || server.url}/\n`);
      await new Promise<void>((resolve) => {
        // Graceful: stop accepting, let in-flight requests finish (http.shutdown_grace_ms), flush metering, close
        // SQLite. A second signal during the grace period gets Node's default handling and ends the process at once.
        const stop = (sig: string) => {
          log.info('shutting down', { signal: sig, in_flight: app.requests.inflight });
          signals.removeListener('SIGHUP', onHup);
          signals.removeListener('SIGTERM', onTerm);
          signals.removeListener('SIGINT', onInt);
          void app.shutdown().finally(() => {
            removePidFile(root);
            lock.release();
            log.info('stopped', { signal: sig });
            void log.flush().then(resolve);
          });
        };
        const onTerm = () => stop('SIGTERM');
        const onInt = () => stop('SIGINT');
        signals.once('SIGTERM', onTerm);
        signals.once('SIGINT', onInt);
      });
    });
}
