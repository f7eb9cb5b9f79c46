import { AppError } from '../../core/errors.js';
import { KEY_ID_RE } from '../../auth/api-keys.js';
import type { CreateKeyInput } from '../../auth/key-admin.js';
import { inspectDataDir } from '../../ops/status.js';
import type { Services } from '../../services.js';
import { ok } from '../envelope.js';
import type { Router } from '../router.js';
import { jsonBody } from '../validate.js';

const NO_STORE = { 'Cache-Control': 'no-store' };
const ROLES = ['user', 'super_admin'];

const invalid = (field: string, why: string) => new AppError('VALIDATION_ERROR', `${field}: ${why}`);

function optInt(v: unknown, field: string, min: number, max: number): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw invalid(field, `an integer from ${min} to ${max}`);
  return v;
}

function optString(v: unknown, field: string, max: number): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > max) throw invalid(field, `a string of at most ${max} characters`);
  return v;
}

/** POST /admin/keys body: every field optional, limits default to the configured ones. */
function parseCreate(body: Record<string, unknown>, s: Services): CreateKeyInput {
  const role = optString(body.role, 'role', 32);
  if (role !== undefined && !ROLES.includes(role)) throw invalid('role', `one of ${ROLES.join(', ')}`);
  return {
    name: optString(body.name, 'name', 200)?.trim() ?? '',
    plan: optString(body.plan, 'plan', 64)?.trim() || s.config.limits.default_plan,
    role: role ?? 'user',
    perMinute: optInt(body.per_minute, 'per_minute', 1, 1e9) ?? s.config.limits.default_per_minute,
    daily: optInt(body.daily, 'daily', 1, 1e12) ?? s.config.limits.default_daily,
    expiresInS: optInt(body.expires_in_s, 'expires_in_s', 60, 100 * 365 * 86400),
  };
}

const DATA_DIR_TTL_MS = 10_000;

/** Key management, today's usage and the server's status for super_admin callers (shapes in docs/console.md, "Admin routes"). */
export function register(router: Router, s: Services): void {
  const started = Date.now();
  // The data directory's facts (row counts, file sizes, tiles per zoom) take tens of milliseconds of the HTTP
  // thread at country scale: read at most every DATA_DIR_TTL_MS, however often the console polls.
  let dataDir: { at: number; value: ReturnType<typeof inspectDataDir> } | undefined;
  const dataDirFacts = () => {
    const now = Date.now();
    if (!dataDir || now - dataDir.at > DATA_DIR_TTL_MS) dataDir = { at: now, value: inspectDataDir(s.config.data_dir) };
    return dataDir.value;
  };
  router.add(
    {
      method: 'GET',
      pattern: '/admin/keys',
      surface: 'admin',
      handler: async () => ok({ keys: await s.keys.list() }, NO_STORE),
    },
    {
      method: 'POST',
      pattern: '/admin/keys',
      surface: 'admin',
      // The full key is in this answer only; it is stored as a hash.
      handler: async (ctx) => ok({ key: await s.keys.create(parseCreate(jsonBody(ctx.req), s)) }, NO_STORE),
    },
    {
      method: 'DELETE',
      pattern: '/admin/keys/:id',
      surface: 'admin',
      handler: async (ctx) => {
        const id = ctx.params.id!;
        if (!KEY_ID_RE.test(id)) throw new AppError('KEY_NOT_FOUND');
        const key = await s.keys.revoke(id);
        // Drop the tile family's cached key state now, so tokens of this key stop working at once.
        s.auth.invalidateKey(id);
        return ok({ revoked: true, key });
      },
    },
    {
      method: 'GET',
      pattern: '/admin/usage',
      surface: 'admin',
      // Read from the store: counters trail the server by the meter's flush interval (about a second).
      handler: async () => ok(await s.quotas(s.clock.nowMs()), NO_STORE),
    },
    {
      method: 'GET',
      pattern: '/admin/status',
      surface: 'admin',
      handler: async () => {
        const facts = dataDirFacts();
        // Counted where keys are kept (this node's SQLite, or PostgreSQL in a cluster), as /admin/keys lists them.
        const keys = await s.keys.list();
        const store = {
          bytes: facts.store?.bytes ?? 0,
          keys: keys.length,
          active_keys: keys.filter((k) => k.active).length,
        };
        return ok(
          {
            ...facts,
            store,
            health: s.health(),
            hot_tier: s.hotTier(),
            uptime_s: Math.round((Date.now() - started) / 1000),
          },
          NO_STORE,
        );
      },
    },
  );
}
