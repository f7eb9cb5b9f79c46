import type { Db } from './db.js';

/**
 * The warm tier for answers (the spec's database tier, `source` = `sqlite`): JSON text, or bytes (a BLOB in the same
 * column: SQLite keeps a value's own type).
 */
export class AnswerCacheRepo {
  private readonly getStmt;
  private readonly putAll;
  private readonly pruneStmt;

  constructor(db: Db) {
    this.getStmt = db.prepare<[string], { value: string | Buffer }>('SELECT value FROM answer_cache WHERE key = ?');
    const put = db.prepare('INSERT OR REPLACE INTO answer_cache (key, value, created_at) VALUES (?, ?, ?)');
    this.putAll = db.transaction((rows: Array<[string, string | Buffer, number]>) => {
      for (const r of rows) put.run(...r);
    });
    this.pruneStmt = db.prepare('DELETE FROM answer_cache WHERE created_at < ?');
  }

  get(key: string): string | Buffer | undefined {
    return this.getStmt.get(key)?.value;
  }

  putMany(rows: Array<[key: string, value: string | Buffer, createdAt: number]>): void {
    if (rows.length) this.putAll.immediate(rows);
  }

  prune(olderThanS: number): number {
    return this.pruneStmt.run(olderThanS).changes;
  }
}
