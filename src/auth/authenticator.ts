import type { LRUCache } from 'lru-cache';
import { growingLru } from '../core/growing-lru.js';
import { AppError, isAppError } from '../core/errors.js';
import { processWarnings, repeatingLog, type Logger } from '../core/log.js';
import type { KeyRow } from '../store/keys-repo.js';
import { assertUsable, hashKey, isWellFormedKey, keyState, lookupKey } from './api-keys.js';
import { SUPER_ADMIN, type Caller } from './caller.js';
import { verifyJwt } from './jwt.js';
import type { KeyLookup, SharedSessions } from './ports.js';
import type { SessionGuard } from './sessions.js';
import { KEY_CALLER_PREFIX, mintTileToken, verifyTileToken } from './tile-token.js';

/** Which credential rules apply: the spec's credential matrix, one value per row. */
export type Surface = 'json' | 'mint' | 'tile' | 'admin' | 'none';

export interface Credentials {
  apiKey?: string;
  bearer?: string;
  tileToken?: string;
}

export interface AuthDeps {
  keys: KeyLookup;
  /** The key store is shared by several nodes (cluster mode). */
  sharedStore?: boolean;
  sessions: SessionGuard;
  /** Session supersede across nodes (cluster mode); without it each node orders the sessions it has seen. */
  sharedSessions?: SharedSessions;
  /**
   * Undefined when the data directory's secret is missing or unsafe: tile tokens then fail closed. A function in
   * cluster mode: the shared secret, undefined until read from PostgreSQL (failing closed meanwhile).
   */
  tileSecret?: Buffer | (() => Buffer | undefined);
  jwtSecret?: Buffer;
  tileTokenTtlS: number;
  keyCacheTtlS: number;
  jwtPerMinute: number;
  jwtDaily: number;
  nowS: () => number;
  /** Where a shared store's failures are told (a process warning when none is given). */
  log?: Logger;
}

const keyCaller = (row: KeyRow, via: Caller['via']): Caller => ({
  kind: 'key',
  id: row.id,
  keyId: row.id,
  role: row.role,
  plan: row.plan,
  perMinute: row.per_minute,
  daily: row.daily,
  via,
});

export class Authenticator {
  /** Tile-family key-state cache (spec: 30 s by default); `null` caches "no such key" too. */
  private readonly cache: LRUCache<string, { row: KeyRow | null }> | undefined;
  /** JSON-family key rows, valid until the store changes (see syncWithStore) or an in-process revoke. */
  private readonly live = new Map<string, KeyRow | null>();
  /** Tile tokens whose signature has been verified: the HMAC is computed once per token, not once per tile. */
  private readonly verified = growingLru<string, { keyId: string; expS: number }>(20_000);
  private storeVersion = -1;
  private lastSync = 0;
  /** A shared store failing a read-through: per request while it is unwell, so at most one line per 10 s. */
  private readonly storeFailed: (fields: Record<string, unknown>) => void;

  constructor(private readonly d: AuthDeps) {
    this.cache = d.keyCacheTtlS > 0 ? growingLru(50_000, { ttl: d.keyCacheTtlS * 1000 }) : undefined;
    this.storeFailed = repeatingLog(d.log ?? processWarnings, 'warn', 'shared auth store read failed');
  }

  private logStoreFailure(what: string, e: unknown): void {
    this.storeFailed({ read: what, error: (e as Error)?.message ?? String(e) });
  }

  /**
   * Key rows are read from memory, but any commit by another process (e.g. `svcmaps keys revoke`) is noticed through
   * SQLite's data_version, checked at most every 50 ms: a revoke from the CLI takes effect within 50 ms, one through
   * DELETE /admin/keys at once, and a request costs a map lookup instead of a database read.
   */
  private syncWithStore(): void {
    this.d.keys.assertAvailable?.(); // a store that cannot be trusted fails key checks closed, cache or not
    const now = Date.now();
    if (now - this.lastSync < 50) return;
    this.lastSync = now;
    const v = this.d.keys.dataVersion();
    if (v === this.storeVersion) return;
    this.storeVersion = v;
    this.live.clear();
    this.cache?.clear();
  }

  private liveRow(key: string): KeyRow | undefined {
    this.syncWithStore();
    const h = hashKey(key);
    let row = this.live.get(h);
    if (row === undefined) {
      row = lookupKey(this.d.keys, key) ?? null;
      if (this.live.size >= 50_000) this.live.clear(); // bounded even under a spray of random keys
      this.live.set(h, row);
    }
    return row ?? undefined;
  }

  /** Hashes of presented keys a shared store did not have either, so a spray of random keys reads it once each. */
  private readonly absent = growingLru<string, true>(50_000, { ttl: 2000 });

  /**
   * On a shared store, a key created on another node a moment ago may not be in this node's mirror yet: it is read
   * through once before authentication. Undefined (nothing to wait for) on one node and for every mirrored key.
   */
  prepare(creds: Credentials): Promise<void> | undefined {
    if (creds.bearer !== undefined && !creds.apiKey) return this.prepareSession(creds.bearer);
    const keys = this.d.keys;
    if (!this.d.sharedStore || !keys.loadByHash || !creds.apiKey || !isWellFormedKey(creds.apiKey)) return undefined;
    const h = hashKey(creds.apiKey);
    if (keys.findByHash(h) || this.absent.has(h)) return undefined;
    return keys.loadByHash(h).then(
      (row) => {
        if (!row) return void this.absent.set(h, true);
        this.live.delete(h);
        this.cache?.delete(`h:${h}`);
      },
      // the key check that follows fails closed if the store is down
      (e: unknown) => this.logStoreFailure('key', e),
    );
  }

  /**
   * Cluster mode: a JWT session is recorded in the shared store and the subject's newest session is copied into this
   * node's session table first, so a session opened on another node supersedes this one. A token that does not
   * verify is left to authenticate(), which answers why; a shared store that cannot answer leaves this node's view.
   */
  private prepareSession(token: string): Promise<void> | undefined {
    const shared = this.d.sharedSessions;
    if (!shared || !this.d.jwtSecret) return undefined;
    const now = this.d.nowS();
    let claims;
    try {
      claims = verifyJwt(token, this.d.jwtSecret, now);
    } catch (e) {
      if (isAppError(e)) return undefined; // a token refused: authenticate() verifies it again and answers why
      throw e;
    }
    const { sub, sid, exp } = claims;
    if (!sid) return undefined;
    return shared.observe(sub, sid, this.d.sessions.rankFor(claims, now), exp).then(
      (latest) => {
        if (latest) this.d.sessions.remember(sub, latest.sid, latest.rank, exp);
      },
      // this node's own view of the subject's sessions decides meanwhile
      (e: unknown) => this.logStoreFailure('session', e),
    );
  }

  private tileSecret(): Buffer | undefined {
    const s = this.d.tileSecret;
    return typeof s === 'function' ? s() : s;
  }

  get tileTokensAvailable(): boolean {
    return this.tileSecret() !== undefined;
  }

  authenticate(surface: Surface, creds: Credentials): Caller | undefined {
    switch (surface) {
      case 'none':
        return undefined;
      case 'tile':
        return this.tileFamily(creds);
      case 'admin': {
        const caller = this.jsonFamily(creds);
        if (caller.role !== SUPER_ADMIN) throw new AppError('INSUFFICIENT_ROLE');
        return caller;
      }
      default:
        return this.jsonFamily(creds);
    }
  }

  /** JSON endpoints, staticmap, minting and admin: key state is read from the store on every request. */
  private jsonFamily(c: Credentials): Caller {
    if (c.apiKey) return keyCaller(assertUsable(this.liveRow(c.apiKey), this.d.nowS()), 'header');
    if (c.bearer !== undefined) return this.jwtCaller(c.bearer);
    throw new AppError('MISSING_TOKEN');
  }

  private jwtCaller(token: string): Caller {
    if (!this.d.jwtSecret) throw new AppError('MAPS_AUTH_UNAVAILABLE');
    const now = this.d.nowS();
    const claims = verifyJwt(token, this.d.jwtSecret, now);
    this.d.sessions.check(claims, now);
    return {
      kind: 'jwt',
      id: `jwt:${claims.sub}`,
      role: claims.role,
      plan: 'platform',
      perMinute: this.d.jwtPerMinute,
      daily: this.d.jwtDaily,
      via: 'bearer',
    };
  }

  /** Tiles, vector, style, glyphs, sprites: header key (cached state) or a tile token; JWTs are not accepted. */
  private tileFamily(c: Credentials): Caller {
    const now = this.d.nowS();
    if (c.apiKey) return keyCaller(assertUsable(this.cachedByKey(c.apiKey), now), 'header');
    if (c.tileToken === undefined) throw new AppError('AUTH_REQUIRED');
    const secret = this.tileSecret();
    if (!secret) throw new AppError('MAPS_AUTH_UNAVAILABLE');
    const keyId = this.verifiedToken(c.tileToken, secret, now);
    const row = this.cachedById(keyId);
    if (!row || keyState(row, now) !== 'active') throw new AppError('API_KEY_REVOKED');
    return keyCaller(row, 'tile_token');
  }

  private verifiedToken(token: string, secret: Buffer, nowS: number): string {
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.expS <= nowS) throw new AppError('TOKEN_EXPIRED');
      return hit.keyId;
    }
    const v = verifyTileToken(token, secret, nowS);
    this.verified.set(token, v);
    return v.keyId;
  }

  private cachedByKey(key: string): KeyRow | undefined {
    this.syncWithStore();
    // Cached under the key's hash so the cache holds no usable secret.
    return this.cached(`h:${hashKey(key)}`, () => lookupKey(this.d.keys, key));
  }

  private cachedById(id: string): KeyRow | undefined {
    // On a shared store revocations come from other nodes: tile tokens follow the store's changes too.
    if (this.d.sharedStore) this.syncWithStore();
    return this.cached(`i:${id}`, () => this.d.keys.findById(id));
  }

  private cached(ck: string, load: () => KeyRow | undefined): KeyRow | undefined {
    const hit = this.cache?.get(ck);
    if (hit) return hit.row ?? undefined;
    const row = load();
    this.cache?.set(ck, { row: row ?? null });
    return row;
  }

  /** Called on revoke so the tile family stops honouring the key at once instead of after the cache lifetime. */
  invalidateKey(id: string): void {
    for (const [h, row] of this.live) if (row?.id === id) this.live.delete(h);
    if (!this.cache) return;
    for (const [ck, v] of this.cache.entries()) if (ck === `i:${id}` || v.row?.id === id) this.cache.delete(ck);
  }

  /** A JWT caller gets a token too, but bound to its subject, so using it answers TOKEN_NOT_KEY_BOUND. */
  mint(caller: Caller): { token: string; expiresAtS: number } {
    const secret = this.tileSecret();
    if (!secret) throw new AppError('TILE_TOKEN_FAILED');
    const expiresAtS = this.d.nowS() + this.d.tileTokenTtlS;
    const callerId = caller.keyId ? KEY_CALLER_PREFIX + caller.keyId : `user:${caller.id.replace(/^jwt:/, '')}`;
    return { token: mintTileToken(callerId, expiresAtS, secret), expiresAtS };
  }
}
