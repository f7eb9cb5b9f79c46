import { LRUCache } from 'lru-cache';
import type { SharedSessions } from '../../auth/ports.js';
import { repeatingLog, type Logger } from '../../core/log.js';
import type { PgPool } from './pool.js';

/**
 * JWT sessions in PostgreSQL's `jwt_sessions`, the shape of the SQLite table each node keeps (sub, sid, the rank the
 * session was first seen with, exp). Why it is used rather than dropped: sessions are the one piece of auth state a
 * cluster kept only in Redis, which is a cache that may run without persistence; an operator expects the cluster's
 * durable store to say which sessions it has seen, and a superseded session to stay superseded on every node when
 * Redis is down or lost its data. So every session is recorded here the first time a node sees it (off the request
 * path), and when Redis cannot answer (or is not configured) supersede is decided here, in one statement, with the
 * same order as Redis and SQLite: the highest rank, ties to the greater sid. Expired rows are pruned hourly.
 */
export class PgSessions implements SharedSessions {
  /** Sessions this node has written already, so each is written once per node, not once per request. */
  private readonly written = new LRUCache<string, true>({ max: 50_000 });
  private lastPrune = 0;
  /** Failed statements: per request while PostgreSQL is unwell, so at most one line per 10 s. */
  private readonly failed: (fields: Record<string, unknown>) => void;

  constructor(
    private readonly pool: PgPool,
    /** Redis, when configured: it answers first; PostgreSQL decides only when it cannot. */
    private readonly primary: SharedSessions | undefined,
    /** False while PostgreSQL is known to be down: the node then keeps its own view at once instead of waiting. */
    private readonly reachable: () => boolean,
    private readonly nowS: () => number,
    log: Logger,
    private readonly timeoutMs = 250,
  ) {
    this.failed = repeatingLog(log, 'warn', 'postgres session statement failed; this node keeps its own view');
  }

  private logFailure(what: string, e: unknown): void {
    this.failed({ statement: what, error: (e as Error)?.message ?? String(e) });
  }

  async observe(
    sub: string,
    sid: string,
    rank: number,
    exp: number,
  ): Promise<{ sid: string; rank: number } | undefined> {
    const fromRedis = await this.primary?.observe(sub, sid, rank, exp);
    if (fromRedis) {
      this.record(sub, sid, rank, exp);
      return fromRedis;
    }
    if (!this.reachable()) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), this.timeoutMs)));
    const decided = this.decide(sub, sid, rank, exp).catch((e: unknown) => void this.logFailure('decide', e));
    return Promise.race([decided, late]).finally(() => clearTimeout(timer));
  }

  /** Records the session and answers the subject's newest, atomically (the CTE's insert is seen through RETURNING). */
  private async decide(sub: string, sid: string, rank: number, exp: number): Promise<{ sid: string; rank: number }> {
    const r = await this.pool.query<{ sid: string; rank: number }>(
      `WITH ins AS (
         INSERT INTO jwt_sessions (sub, sid, rank, exp) VALUES ($1, $2, $3, $4)
         ON CONFLICT (sub, sid) DO NOTHING RETURNING sid, rank
       )
       SELECT sid, rank FROM (SELECT sid, rank FROM jwt_sessions WHERE sub = $1 UNION ALL SELECT sid, rank FROM ins) s
       ORDER BY rank DESC, sid COLLATE "C" DESC LIMIT 1`,
      [sub, sid, rank, exp],
    );
    this.written.set(`${sub}\n${sid}`, true);
    this.prune();
    return r.rows[0]!;
  }

  /** The durable record of a session Redis decided on: written once per node, never awaited by a request. */
  private record(sub: string, sid: string, rank: number, exp: number): void {
    const k = `${sub}\n${sid}`;
    if (this.written.has(k) || !this.reachable()) return;
    this.written.set(k, true);
    this.pool
      .query(
        'INSERT INTO jwt_sessions (sub, sid, rank, exp) VALUES ($1, $2, $3, $4) ON CONFLICT (sub, sid) DO NOTHING',
        [sub, sid, rank, exp],
      )
      .then(
        () => this.prune(),
        (e: unknown) => {
          this.logFailure('record', e);
          this.written.delete(k); // written at a later sighting
        },
      );
  }

  private prune(): void {
    const now = this.nowS();
    if (now - this.lastPrune < 3600) return;
    this.lastPrune = now;
    this.pool.query('DELETE FROM jwt_sessions WHERE exp < $1', [now]).catch((e: unknown) => {
      this.logFailure('prune', e);
      this.lastPrune = 0; // tried again at the next write
    });
  }
}
