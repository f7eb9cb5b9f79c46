import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { checkConfig, publishedSchema } from '../ops/config-check.js';
import { CliError, type Io } from './io.js';

/** `svcmaps config check` validates what `serve` would load; `svcmaps config schema` prints the JSON Schema. */
export function makeConfigCommand(io: Io): CommandUnknownOpts {
  const config = new Command('config').description('check the configuration or print its JSON Schema');
  config
    .command('check')
    .description(
      'validate the config file, SVCMAPS_* environment and flags; report unknown keys; show the effective config',
    )
    .option('--config <file>', 'config file (JSON)')
    .option('--data <dir>', 'data directory (env SVCMAPS_DATA)')
    .option('--print', 'also print the effective configuration (secrets redacted)')
    .option('--json', 'machine-readable output')
    .action((o) => {
      const report = checkConfig({ file: o.config, env: io.env, flags: o.data ? { data_dir: o.data } : undefined });
      if (o.json) io.out(JSON.stringify(report) + '\n');
      else {
        io.out(`config file: ${report.file ?? '(none; defaults apply)'}\n`);
        for (const e of report.env) io.out(`environment: ${e.name} sets ${e.path}\n`);
        for (const i of report.issues) io.out(`  ✗ ${i.origin}: ${i.path}: ${i.message}\n`);
        if (report.ok)
          io.out(
            `✓ configuration is valid (data directory ${report.effective!.data_dir}, listening on ${report.effective!.host}:${report.effective!.port})\n`,
          );
        if (report.ok && o.print) io.out(JSON.stringify(report.effective, null, 2) + '\n');
      }
      if (!report.ok)
        throw new CliError(`configuration has ${report.issues.length} problem${report.issues.length === 1 ? '' : 's'}`);
    });
  config
    .command('schema')
    .description('print the JSON Schema of the config file (with defaults)')
    .action(() => io.out(JSON.stringify(publishedSchema(), null, 2) + '\n'));
  return config;
}
