import { AppError } from '../core/errors.js';
import type { SessionsRepo } from '../store/sessions-repo.js';
import type { JwtClaims } from './jwt.js';

/**
 * One live session per subject: a JWT whose `sid` is older than the newest seen for its `sub` is superseded.
 * "Older" is ordered by `iat` when present, else by when the server first saw the session.
 */
export class SessionGuard {
  private lastPrune = 0;

  constructor(private readonly repo: SessionsRepo) {}

  /** The rank this node will use for a session it has not recorded yet. */
  rankFor(claims: JwtClaims, nowS: number): number {
    return this.repo.rankOf(claims.sub, claims.sid!) ?? claims.iat ?? nowS;
  }

  /** A session seen by another node (from the shared store): recorded so check() orders against it. */
  remember(sub: string, sid: string, rank: number, exp: number): void {
    this.repo.record(sub, sid, rank, exp);
  }

  check(claims: JwtClaims, nowS: number): void {
    if (!claims.sid) return;
    let rank = this.repo.rankOf(claims.sub, claims.sid);
    if (rank === undefined) {
      rank = claims.iat ?? nowS;
      this.repo.record(claims.sub, claims.sid, rank, claims.exp);
    }
    const latest = this.repo.latest(claims.sub);
    if (latest && latest.sid !== claims.sid && latest.rank > rank) throw new AppError('SESSION_SUPERSEDED');
    if (nowS - this.lastPrune > 3600) {
      this.lastPrune = nowS;
      this.repo.prune(nowS);
    }
  }
}
