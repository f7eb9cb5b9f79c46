import type { Db } from './db.js';

export interface KeyRow {
  id: string;
  key_hash: string;
  key_prefix: string;
  name: string;
  plan: string;
  role: string;
  scopes: string;
  per_minute: number;
  daily: number;
  active: number;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
}

export type NewKeyRow = Omit<KeyRow, 'active' | 'revoked_at'>;

/** API key rows. Lookups go by hash so the store never needs the key itself. */
export class KeysRepo {
  private readonly byHash;
  private readonly byId;
  private readonly insertStmt;
  private readonly revokeStmt;
  private readonly listStmt;
  private readonly versionStmt;

  constructor(db: Db) {
    this.byHash = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE key_hash = ?');
    this.byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
    this.insertStmt = db.prepare(
      `INSERT INTO api_keys (id, key_hash, key_prefix, name, plan, role, scopes, per_minute, daily, created_at, expires_at)
       VALUES (@id, @key_hash, @key_prefix, @name, @plan, @role, @scopes, @per_minute, @daily, @created_at, @expires_at)`,
    );
    this.revokeStmt = db.prepare('UPDATE api_keys SET active = 0, revoked_at = COALESCE(revoked_at, ?) WHERE id = ?');
    this.listStmt = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, id');
    this.versionStmt = db.prepare('PRAGMA data_version').pluck();
  }

  findByHash(hash: string): KeyRow | undefined {
    return this.byHash.get(hash);
  }

  findById(id: string): KeyRow | undefined {
    return this.byId.get(id);
  }

  insert(row: NewKeyRow): void {
    this.insertStmt.run(row);
  }

  /** Soft delete: the row stays (for audit and token answers), marked inactive with its revocation time. */
  revoke(id: string, atSeconds: number): boolean {
    return this.revokeStmt.run(atSeconds, id).changes > 0;
  }

  /** Changes whenever another connection (the CLI, another process) commits to the store. */
  dataVersion(): number {
    return this.versionStmt.get() as number;
  }

  list(): KeyRow[] {
    return this.listStmt.all();
  }
}
