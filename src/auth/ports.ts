import type { KeyRow, NewKeyRow } from '../store/keys-repo.js';

/**
 * What the request path needs of the key store: synchronous reads. The SQLite repository answers from its own
 * connection; the cluster store answers from an in-memory mirror of PostgreSQL kept fresh by polling and pub/sub.
 */
export interface KeyLookup {
  findByHash(hash: string): KeyRow | undefined;
  findById(id: string): KeyRow | undefined;
  /** Changes whenever any key changed anywhere; the authenticator drops its caches when it does. */
  dataVersion(): number;
  /** Throws AppError('MAPS_AUTH_UNAVAILABLE') when key state cannot be trusted (key checks fail closed). */
  assertAvailable?(): void;
  /** A shared store reads a key it has not mirrored yet straight from the store (and mirrors it). */
  loadByHash?(hash: string): Promise<KeyRow | undefined>;
}

/** What key administration needs: writes and listings, synchronous (SQLite) or not (PostgreSQL). */
export interface KeyStore extends KeyLookup {
  insert(row: NewKeyRow): void | Promise<void>;
  revoke(id: string, atSeconds: number): boolean | Promise<boolean>;
  list(): KeyRow[] | Promise<KeyRow[]>;
  /** Read-through lookup by id from the store itself, not a cache. */
  fetchById?(id: string): Promise<KeyRow | undefined>;
}

/** Where revocations are announced so every node drops its cached key state at once. */
export interface KeyEvents {
  publishChanged(id: string): Promise<void>;
}

/**
 * Session supersede across nodes: records a session's rank for its subject (first sighting wins) and answers the
 * subject's newest session, in one atomic step. `undefined` when the shared store cannot answer.
 */
export interface SharedSessions {
  observe(sub: string, sid: string, rank: number, exp: number): Promise<{ sid: string; rank: number } | undefined>;
}
