import type { Db } from './db.js';

/** The JWT sessions seen per subject, so a newer session can supersede older ones. */
export class SessionsRepo {
  private readonly latestStmt;
  private readonly getStmt;
  private readonly insertStmt;
  private readonly pruneStmt;

  constructor(db: Db) {
    this.latestStmt = db.prepare<[string], { sid: string; rank: number }>(
      'SELECT sid, rank FROM jwt_sessions WHERE sub = ? ORDER BY rank DESC, sid DESC LIMIT 1',
    );
    this.getStmt = db.prepare<[string, string], { rank: number }>(
      'SELECT rank FROM jwt_sessions WHERE sub = ? AND sid = ?',
    );
    this.insertStmt = db.prepare('INSERT OR IGNORE INTO jwt_sessions (sub, sid, rank, exp) VALUES (?, ?, ?, ?)');
    this.pruneStmt = db.prepare('DELETE FROM jwt_sessions WHERE exp < ?');
  }

  latest(sub: string): { sid: string; rank: number } | undefined {
    return this.latestStmt.get(sub);
  }

  rankOf(sub: string, sid: string): number | undefined {
    return this.getStmt.get(sub, sid)?.rank;
  }

  record(sub: string, sid: string, rank: number, exp: number): void {
    this.insertStmt.run(sub, sid, rank, exp);
  }

  prune(nowSeconds: number): void {
    this.pruneStmt.run(nowSeconds);
  }
}
