import { loadConfig } from '../config/load.js';
import type { Config } from '../config/defaults.js';
import { CliError, type Io } from './io.js';

export interface CommonOptions {
  data?: string;
  config?: string;
}

/** Config for a command: flags > env SVCMAPS_* > --config file > defaults. Config errors become one-line CLI errors. */
export function commandConfig(io: Io, opts: CommonOptions, flags: Record<string, unknown> = {}): Config {
  try {
    return loadConfig({
      file: opts.config,
      env: io.env,
      flags: { ...(opts.data ? { data_dir: opts.data } : {}), ...flags },
    });
  } catch (e) {
    throw new CliError((e as Error).message);
  }
}

export function positiveInt(name: string) {
  return (v: string): number => {
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliError(`${name} must be a positive whole number, got "${v}"`);
    return Number(v);
  };
}

export function portNumber(v: string): number {
  if (!/^\d+$/.test(v) || Number(v) > 65535) throw new CliError(`--port must be 0-65535, got "${v}"`);
  return Number(v);
}
