import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { Client } from '../ops/selftest/client.js';
import type { LocalAppliance } from '../ops/selftest/local.js';
import { allChecks, runChecks, type SelftestReport } from '../ops/selftest/runner.js';
import type { CheckState, Target } from '../ops/selftest/types.js';
import { checkLine, verdictLine } from './ui/selftest-lines.js';
import { CliError, processIo, type Io } from './io.js';
import { commandConfig } from './options.js';

/** Where the run's progress goes: the ink checklist on a terminal, plain lines for logs, or nothing (--json). */
interface Display {
  phase(text: string): void;
  update(states: CheckState[]): void;
  finish(report: SelftestReport): void;
  abort(): void;
}

function lineDisplay(io: Io, title: string, strict: boolean): Display {
  const printed = new Set<string>();
  const width = Math.max(...allChecks().map((c) => c.label.length));
  io.out(`${title}\n`);
  return {
    phase: (t) => io.out(`${t}\n`),
    update(states) {
      for (const s of states) {
        if ((s.status === 'pass' || s.status === 'fail' || s.status === 'skip') && !printed.has(s.id)) {
          printed.add(s.id);
          io.out(checkLine(s, width) + '\n');
        }
      }
    },
    finish: (r) => io.out(verdictLine(r, strict) + '\n'),
    abort: () => io.out('interrupted\n'),
  };
}

function parseRoute(v: string): [[number, number], [number, number]] {
  const n = v.split(',').map(Number);
  if (n.length !== 4 || n.some((x) => !Number.isFinite(x)) || Math.abs(n[0]!) > 90 || Math.abs(n[2]!) > 90) {
    throw new CliError(`--route must be lat,lng,lat,lng (e.g. 43.7384,7.4246,43.7450,7.4330), got "${v}"`);
  }
  return [
    [n[0]!, n[1]!],
    [n[2]!, n[3]!],
  ];
}

export function makeSelftestCommand(io: Io, signals: NodeJS.EventEmitter = process): CommandUnknownOpts {
  return new Command('selftest')
    .description(
      'end-to-end checks of every capability over HTTP: on a throwaway copy of the data directory, or against a running server',
    )
    .option('--data <dir>', 'data directory to copy and test (env SVCMAPS_DATA)')
    .option('--config <file>', 'config file (JSON)')
    .option('--url <url>', 'test a running server instead (needs --key)')
    .option('--key <key>', 'API key for --url (a super_admin key also checks /admin/metrics)')
    .option(
      '--route <lat,lng,lat,lng>',
      'origin and destination for the directions check (default: random pairs from the imported graph; Amman with --url)',
      parseRoute,
    )
    .option('--strict', 'count skipped checks (data not imported) as failures')
    .option('--keep', 'keep the temporary data directory copy for inspection')
    .option('--json', 'print one JSON report (no live view)')
    .action(async (o) => {
      if (o.url && !o.key) throw new CliError('--url needs --key (an API key of that server)');
      if (o.key && !o.url) throw new CliError('--key goes with --url; without --url the self-test makes its own keys');
      if (o.url && o.data) throw new CliError('use either --data (throwaway copy) or --url (running server), not both');
      const config = commandConfig(io, o);
      const title = o.url
        ? `svcmaps selftest — running server ${o.url}`
        : `svcmaps selftest — copy of ${config.data_dir}`;
      // The ink checklist only draws on the real terminal; captured output (tests, pipes, CI logs) gets plain lines.
      const tty = io === processIo && Boolean(process.stdout.isTTY);
      const display: Display | undefined = o.json
        ? undefined
        : tty
          ? (await import('./ui/selftest-checklist.js')).selftestChecklist(title, Boolean(o.strict)) // ink, terminal only
          : lineDisplay(io, title, Boolean(o.strict));
      let local: LocalAppliance | undefined;
      let target: Target;
      const t0 = performance.now();
      // Ctrl-C or SIGTERM stops the run and still removes the temporary copy (a killed run would leave it behind).
      let interrupted = false;
      let interrupt: () => void = () => undefined;
      const stopped = new Promise<never>((_, reject) => {
        interrupt = () => {
          interrupted = true;
          reject(new CliError('selftest interrupted; nothing was changed', 130));
        };
      });
      // The interrupt is answered by the races below; marked handled for one that comes when no race waits on it.
      stopped.catch((e: unknown) => {
        if (!(e instanceof CliError)) throw e;
      });
      signals.once('SIGINT', interrupt);
      signals.once('SIGTERM', interrupt);
      try {
        // --url always comes with --key (checked above).
        if (o.url && o.key)
          target = {
            mode: 'remote',
            url: o.url.replace(/\/+$/, ''),
            client: new Client(o.url.replace(/\/+$/, ''), o.key),
          };
        else {
          display?.phase('copying the data directory and starting a throwaway appliance…');
          const { startLocal } = await import('../ops/selftest/local.js'); // the whole app, for this path only
          const starting = startLocal(config).then((l) => (interrupted ? void l.close() : (local = l)));
          await Promise.race([starting, stopped]);
          target = local!.target;
          display?.phase(
            `started on ${target.url} in ${Math.round(performance.now() - t0)} ms (copied: ${local!.copied.join(', ') || 'nothing, fresh directory'})`,
          );
        }
        if (o.route) target = { ...target, routePairs: [o.route] };
        const report = await Promise.race([runChecks(target, (s) => display?.update(s)), stopped]);
        display?.finish(report);
        if (o.json) io.out(JSON.stringify(report) + '\n');
        if (report.failed || (o.strict && report.skipped)) {
          throw new CliError(
            `selftest failed: ${report.failed} failed${o.strict && report.skipped ? `, ${report.skipped} skipped (--strict)` : ''}`,
          );
        }
      } finally {
        signals.removeListener('SIGINT', interrupt);
        signals.removeListener('SIGTERM', interrupt);
        if (interrupted) display?.abort();
        local?.close(Boolean(o.keep));
        if (local && o.keep) io.err(`kept the data directory copy at ${local.dir}\n`);
      }
    });
}
