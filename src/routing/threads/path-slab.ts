import { pathArraysBytes, pathArraysIn, routePath, type RoutePath } from '../query/path.js';

/**
 * A path handed to another routing thread (route-help.ts): its arrays in a SharedArrayBuffer the asking thread
 * writes once and the helper reads in place. Posted as a copy instead, a long route's path (~50 bytes a piece,
 * thousands of pieces) was serialised on the asking thread, in fresh memory every time, while it had the rest of
 * its answer to write: 0.15-0.27 ms a job at 600 copies, two jobs a long route.
 */
export interface SharedPath {
  buf: SharedArrayBuffer;
  at: number;
  n: number;
  behind: number;
  toward: number;
  distM: number;
  ms: number;
}

/**
 * One routing thread's buffer for the paths it hands over. Pieces of it are handed out in turn during a query and
 * the whole is reused by the next query once every helper is done with it (`reset`); a helper that may still be
 * reading (given up on) keeps the old buffer to itself (`abandon`).
 */
export class PathSlab {
  private buf: SharedArrayBuffer;
  private used = 0;

  constructor(bytes = 1 << 18) {
    this.buf = new SharedArrayBuffer(bytes);
  }

  /** A new query: every path handed out so far has been read (or will never be). */
  reset(): void {
    this.used = 0;
  }

  /** A helper may still read what was handed out: later paths go to a new buffer, never over it. */
  abandon(): void {
    this.buf = new SharedArrayBuffer(this.buf.byteLength);
    this.used = 0;
  }

  put(p: RoutePath): SharedPath {
    const n = p.n;
    const s: SharedPath = {
      ...this.room(pathArraysBytes(n)),
      n,
      behind: p.behind,
      toward: p.toward,
      distM: p.distM,
      ms: p.ms,
    };
    const v = pathArraysIn(s.buf, s.at, n);
    v.dist.set(p.dist.subarray(0, n));
    v.time.set(p.time.subarray(0, n));
    v.pts.set(p.pts.subarray(0, 2 * n + 2));
    v.chain.set(p.chain.subarray(0, n));
    v.dev.set(p.dev.subarray(0, n));
    v.way.set(p.way.subarray(0, n));
    v.node.set(p.node.subarray(0, n));
    v.say.set(p.say.subarray(0, n));
    return s;
  }

  /** The turns of a route not assembled yet (chains.ts route), for the helper to assemble. */
  putTurns(turns: Uint32Array): SharedTurns {
    const s = { ...this.room(4 * turns.length), n: turns.length };
    sharedTurns(s).set(turns);
    return s;
  }

  /** `bytes` of the buffer nobody else holds in this query (8-byte aligned). */
  private room(bytes: number): { buf: SharedArrayBuffer; at: number } {
    if (this.used + bytes > this.buf.byteLength) {
      // a bigger one; the pieces already handed out stay readable in the old one, which their jobs hold
      this.buf = new SharedArrayBuffer(Math.max(2 * this.buf.byteLength, bytes));
      this.used = 0;
    }
    const at = this.used;
    this.used += (bytes + 7) & ~7;
    return { buf: this.buf, at };
  }
}

/** A route's turns in a slab (PathSlab.putTurns). */
export interface SharedTurns {
  buf: SharedArrayBuffer;
  at: number;
  n: number;
}

export const sharedTurns = ({ buf, at, n }: SharedTurns) => new Uint32Array(buf, at, n);

/** The path as the helper reads it: views of the asking thread's buffer (no overlap edges: those tests are the asker's). */
export function sharedPath(s: SharedPath): RoutePath {
  return routePath(s.n, pathArraysIn(s.buf, s.at, s.n), NO_EDGES, s.behind, s.toward, s.distM, s.ms);
}

const NO_EDGES = new Uint32Array(0);
