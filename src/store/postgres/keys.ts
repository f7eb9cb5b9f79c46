import { AppError } from '../../core/errors.js';
import type { KeyStore } from '../../auth/ports.js';
import type { KeyRow, NewKeyRow } from '../keys-repo.js';
import type { PgPool } from './pool.js';

type PgKeyRow = KeyRow & { change_seq: number };

const strip = ({ change_seq: _seq, ...row }: PgKeyRow): KeyRow => row;

/**
 * API keys in PostgreSQL, read on the request path from an in-memory mirror of the whole table. The mirror pulls
 * rows changed since the last pull (every key write takes a new change_seq) every `pollMs`, and at once when told
 * (a revocation announced over Redis). Reads stay synchronous; when PostgreSQL has not answered for `staleMs`
 * the mirror cannot be trusted and key checks fail closed.
 */
export class PgKeyStore implements KeyStore {
  private readonly byHash = new Map<string, KeyRow>();
  private readonly byId = new Map<string, KeyRow>();
  private seq = 0;
  private version = 0;
  private loaded = false;
  private healthy = false;
  private okAt = 0;
  private lastError = 'not connected yet';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  /** Set once `prepare` (the schema migration) has succeeded; until then every poll retries it first. */
  private prepared = false;

  constructor(
    private readonly pool: PgPool,
    private readonly pollMs: number,
    private readonly staleMs = Math.max(2000, pollMs * 4),
    private readonly prepare: () => Promise<void> = async () => undefined,
  ) {}

  /**
   * First full load, then polling; resolves once loaded or failed, never throws: a node whose PostgreSQL is down at
   * start still starts, answers key checks 503 (fail closed) and loads as soon as a poll gets through.
   */
  async start(): Promise<void> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.sync(), this.pollMs);
      this.timer.unref();
    }
    await this.sync();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** 'ok', or why key state cannot be trusted. */
  state(): string {
    if (this.healthy && Date.now() - this.okAt <= this.staleMs) return 'ok';
    return this.lastError;
  }

  assertAvailable(): void {
    if (!this.loaded || this.state() !== 'ok') throw new AppError('MAPS_AUTH_UNAVAILABLE', 'key store unavailable');
  }

  /** Pulls changed rows now; concurrent calls share one pull, and a call during a pull schedules one more. */
  sync(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pull();
      } while (this.again);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  private async pull(): Promise<void> {
    try {
      if (!this.prepared) {
        await this.prepare();
        this.prepared = true;
      }
      const r = await this.pool.query<PgKeyRow>('SELECT * FROM api_keys WHERE change_seq > $1 ORDER BY change_seq', [
        this.seq,
      ]);
      for (const row of r.rows) {
        this.apply(strip(row));
        this.seq = Math.max(this.seq, row.change_seq);
      }
      this.loaded = true;
      this.healthy = true;
      this.okAt = Date.now();
    } catch (e) {
      this.healthy = false;
      this.lastError = (e as Error).message || 'unreachable';
    }
  }

  private apply(row: KeyRow): void {
    const old = this.byId.get(row.id);
    if (old && old.key_hash !== row.key_hash) this.byHash.delete(old.key_hash);
    this.byId.set(row.id, row);
    this.byHash.set(row.key_hash, row);
    this.version++;
  }

  findByHash(hash: string): KeyRow | undefined {
    return this.byHash.get(hash);
  }

  findById(id: string): KeyRow | undefined {
    return this.byId.get(id);
  }

  dataVersion(): number {
    return this.version;
  }

  /** A key this node has not heard of yet (created on another node a moment ago): read it through once. */
  async loadByHash(hash: string): Promise<KeyRow | undefined> {
    const r = await this.pool.query<PgKeyRow>('SELECT * FROM api_keys WHERE key_hash = $1', [hash]);
    const row = r.rows[0] && strip(r.rows[0]);
    if (row) this.apply(row);
    return row;
  }

  async fetchById(id: string): Promise<KeyRow | undefined> {
    const r = await this.pool.query<PgKeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    const row = r.rows[0] && strip(r.rows[0]);
    if (row) this.apply(row);
    return row;
  }

  async insert(row: NewKeyRow): Promise<void> {
    const r = await this.pool.query<PgKeyRow>(
      `INSERT INTO api_keys (id, key_hash, key_prefix, name, plan, role, scopes, per_minute, daily, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING *`,
      [
        row.id,
        row.key_hash,
        row.key_prefix,
        row.name,
        row.plan,
        row.role,
        row.scopes,
        row.per_minute,
        row.daily,
        row.created_at,
        row.expires_at,
      ],
    );
    this.apply(strip(r.rows[0]!));
  }

  /** Soft delete, like the SQLite store: the row stays, inactive, with its first revocation time. */
  async revoke(id: string, atSeconds: number): Promise<boolean> {
    const r = await this.pool.query<PgKeyRow>(
      `UPDATE api_keys SET active = 0, revoked_at = COALESCE(revoked_at, $1), change_seq = nextval('api_keys_change_seq')
       WHERE id = $2 RETURNING *`,
      [atSeconds, id],
    );
    if (r.rows[0]) this.apply(strip(r.rows[0]));
    return r.rows.length > 0;
  }

  /** Copies rows as they are (ids, hashes, states, times); rows already present are left alone. */
  async importRows(rows: KeyRow[]): Promise<number> {
    let added = 0;
    for (const k of rows) {
      const r = await this.pool.query(
        `INSERT INTO api_keys (id, key_hash, key_prefix, name, plan, role, scopes, per_minute, daily, active, created_at,
           expires_at, revoked_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
        [
          k.id,
          k.key_hash,
          k.key_prefix,
          k.name,
          k.plan,
          k.role,
          k.scopes,
          k.per_minute,
          k.daily,
          k.active,
          k.created_at,
          k.expires_at,
          k.revoked_at,
        ],
      );
      added += r.rowCount ?? 0;
    }
    return added;
  }

  async list(): Promise<KeyRow[]> {
    const r = await this.pool.query<PgKeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
    return r.rows.map(strip);
  }
}
