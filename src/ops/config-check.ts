import { readFileSync } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { CONFIG_SCHEMA } from '../config/schema.js';
import { DEFAULTS, type Config } from '../config/defaults.js';
import { envLayer, loadConfig, validateConfig } from '../config/load.js';

/** One problem with one layer of configuration, located by dotted path. */
interface ConfigIssue {
  origin: string;
  path: string;
  message: string;
}

export interface ConfigReport {
  ok: boolean;
  file: string | null;
  issues: ConfigIssue[];
  /** SVCMAPS_* variables that override the file, and the key each one sets. */
  env: Array<{ name: string; path: string }>;
  /** The merged configuration, secrets redacted; absent when a layer is invalid. */
  effective?: Config;
}

type Schema = { properties?: Record<string, Schema> };
const validate = validateConfig;

function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = d[j]!;
      d[j] = Math.min(d[j]! + 1, d[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return d[b.length]!;
}

/** The known keys next to an unknown one, so a typo gets a "did you mean". */
function siblings(path: string[]): string[] {
  let node: Schema | undefined = CONFIG_SCHEMA as Schema;
  for (const p of path) node = node?.properties?.[p];
  return Object.keys(node?.properties ?? {}).filter((k) => k !== '$schema');
}

function describe(e: ErrorObject, origin: string): ConfigIssue {
  const parts = e.instancePath.split('/').filter(Boolean);
  if (e.keyword === 'additionalProperties') {
    const key = (e.params as { additionalProperty: string }).additionalProperty;
    const known = siblings(parts);
    // A typo in the tail of a long key ("per_minite" for "default_per_minute") is compared with that tail too.
    const score = (k: string) =>
      Math.min(distance(key, k), k.length > key.length ? distance(key, k.slice(-key.length)) + 1 : Infinity);
    const best = known.map((k) => [k, score(k)] as const).sort((a, b) => a[1] - b[1])[0];
    const hint = best && best[1] <= Math.max(2, Math.floor(key.length / 3)) ? ` (did you mean "${best[0]}"?)` : '';
    return { origin, path: [...parts, key].join('.'), message: `unknown key${hint}` };
  }
  const extra = e.keyword === 'enum' ? `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}` : '';
  return { origin, path: parts.join('.') || '(root)', message: `${e.message}${extra}` };
}

const check = (layer: unknown, origin: string): ConfigIssue[] =>
  validate(layer) ? [] : (validate.errors ?? []).map((e) => describe(e, origin));

/** Validates the file, the environment and flags separately (so each problem names its source), then merges. */
export function checkConfig(src: {
  file?: string;
  env: NodeJS.ProcessEnv;
  flags?: Record<string, unknown>;
}): ConfigReport {
  const issues: ConfigIssue[] = [];
  if (src.file) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(src.file, 'utf8'));
    } catch (e) {
      issues.push({ origin: 'file', path: '(file)', message: (e as Error).message });
    }
    if (parsed !== undefined) {
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        issues.push({ origin: 'file', path: '(root)', message: 'must be a JSON object' });
      else issues.push(...check(parsed, 'file'));
    }
  }
  const env = Object.entries(src.env)
    .filter(([k, v]) => k.startsWith('SVCMAPS_') && v)
    .map(([name]) => ({
      name,
      path: name
        .slice(8)
        .toLowerCase()
        .replace(/__/g, '.')
        .replace(/^data$/, 'data_dir'),
    }));
  issues.push(...check(envLayer(src.env), 'environment'));
  if (src.flags) issues.push(...check(src.flags, 'command line'));
  let effective: Config | undefined;
  if (!issues.length) {
    try {
      effective = loadConfig({ file: src.file, env: src.env, flags: src.flags });
    } catch (e) {
      issues.push({ origin: 'config', path: '(merged)', message: (e as Error).message });
    }
  }
  if (effective)
    effective = {
      ...effective,
      auth: { ...effective.auth, jwt_secret: effective.auth.jwt_secret ? '(set, redacted)' : '' },
      cluster: {
        ...effective.cluster,
        postgres_url: withoutPassword(effective.cluster.postgres_url),
        redis_url: withoutPassword(effective.cluster.redis_url),
        tile_token_secret: effective.cluster.tile_token_secret ? '(set, redacted)' : '',
      },
    };
  return { ok: issues.length === 0, file: src.file ?? null, issues, env, ...(effective ? { effective } : {}) };
}

/** A connection URL as printed: its password (user:password@) replaced, everything else kept for checking. */
function withoutPassword(url: string): string {
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = 'redacted';
    return u.toString();
  } catch (e) {
    if (!(e instanceof TypeError)) throw e; // (what URL throws for a value it cannot parse)
    return url ? '(set, not a URL)' : url; // a value URL cannot parse may still hold a secret: never print it
  }
}

/** The published JSON Schema: the validator's schema plus each key's default value. */
export function publishedSchema(): Record<string, unknown> {
  const withDefaults = (schema: Record<string, unknown>, defaults: unknown): Record<string, unknown> => {
    const props = schema.properties as Record<string, Record<string, unknown>> | undefined;
    if (!props || typeof defaults !== 'object' || defaults === null)
      return defaults === undefined ? schema : { ...schema, default: defaults };
    const out: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(props)) out[k] = withDefaults(v, (defaults as Record<string, unknown>)[k]);
    return { ...schema, properties: out };
  };
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'svcmaps configuration file',
    description:
      'Every key is optional; precedence is command-line flags > SVCMAPS_* environment (nested keys joined by __) > this file > defaults.',
    ...withDefaults(CONFIG_SCHEMA, DEFAULTS),
  };
}
