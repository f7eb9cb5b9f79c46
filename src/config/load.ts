import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { CONFIG_SCHEMA } from './schema.js';
import { DEFAULTS, type Config } from './defaults.js';

class ConfigError extends Error {
  override name = 'ConfigError';
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function merge(base: Json, over: Json): Json {
  const out: Json = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObj(v) && isObj(base[k]) ? merge(base[k], v) : v;
  return out;
}

/**
 * The config schema's validator, compiled once per process (`config check` reports with the same one). The schema
 * is ours and fixed, so ajv neither checks it against the meta-schema nor optimizes the generated code: that
 * halves a compile every start of every command pays (~100 -> ~55 ms).
 */
export const validateConfig = new Ajv({
  allErrors: true,
  strict: false,
  validateSchema: false,
  code: { optimize: false },
}).compile(CONFIG_SCHEMA);
const validate = validateConfig;

function check(layer: Json, origin: string): void {
  if (validate(layer)) return;
  const msgs = (validate.errors ?? []).map((e) => {
    const where = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(root)';
    const extra =
      e.keyword === 'additionalProperties'
        ? ` "${(e.params as { additionalProperty: string }).additionalProperty}"`
        : '';
    return `${where}: ${e.message}${extra}`;
  });
  throw new ConfigError(`${origin}: ${msgs.join('; ')}`);
}

/** Environment overrides: SVCMAPS_<PATH> with `__` between nested keys, e.g. SVCMAPS_AUTH__JWT_SECRET. */
export function envLayer(env: NodeJS.ProcessEnv): Json {
  const out: Json = {};
  for (const [name, raw] of Object.entries(env)) {
    if (!name.startsWith('SVCMAPS_') || raw === undefined || raw === '') continue;
    const path = name.slice(8).toLowerCase().split('__');
    if (path.length === 1 && path[0] === 'data') path[0] = 'data_dir';
    let value: unknown = raw;
    if (/^(true|false)$/.test(raw)) value = raw === 'true';
    else if (/^-?\d+$/.test(raw)) value = Number(raw);
    else if (raw.startsWith('[')) {
      try {
        value = JSON.parse(raw);
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e; // not JSON: kept as a string, which the schema reports
      }
    }
    let node = out;
    for (const key of path.slice(0, -1)) node = node[key] = isObj(node[key]) ? node[key] : {};
    node[path[path.length - 1]!] = value;
  }
  return out;
}

export interface ConfigSources {
  file?: string;
  env?: NodeJS.ProcessEnv;
  flags?: Json;
}

/** flags > env SVCMAPS_* > config file > defaults; each layer is validated so the error names where it came from. */
export function loadConfig(src: ConfigSources = {}): Config {
  let merged: Json = DEFAULTS as unknown as Json;
  if (src.file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(src.file, 'utf8'));
    } catch (e) {
      throw new ConfigError(`config file ${src.file}: ${(e as Error).message}`);
    }
    if (!isObj(parsed)) throw new ConfigError(`config file ${src.file}: must be a JSON object`);
    check(parsed, `config file ${src.file}`);
    merged = merge(merged, parsed);
  }
  if (src.env) {
    const layer = envLayer(src.env);
    check(layer, 'environment');
    merged = merge(merged, layer);
  }
  if (src.flags) {
    check(src.flags, 'command line');
    merged = merge(merged, src.flags);
  }
  check(merged, 'config');
  return merged as unknown as Config;
}

/** Config for tests and embedding: defaults with a few values replaced, validated like any other layer. */
export const configWith = (overrides: Json): Config => loadConfig({ flags: overrides });
