import type { CHArrays } from '../build/ch-build.js';

/**
 * The list ShortcutUnpacker.roads opens shortcuts in: part j is CH edge LIST_IDS[j]; LIST_KID[j] is where its two
 * children are in the list, or for a road edge, chA's code of it (< 0). One per thread (unpacking is
 * synchronous): as module constants, V8 compiles the loop over them into one that keeps many more cache misses in
 * flight (about twice as fast on a country graph as the same loop over arrays held in fields). 2 x 512 KB; a path
 * whose list would not fit (about 65,000 road edges) is opened in growable arrays instead.
 */
const LIST_CAP = 1 << 17;
const LIST_IDS = new Int32Array(LIST_CAP);
const LIST_KID = new Int32Array(LIST_CAP);
let listLimit = LIST_CAP;

/** Tests: a lower limit for the list (down to 0), so paths take the growable arrays' way too. */
export function setUnpackListLimit(n: number): void {
  listLimit = Math.max(0, Math.min(LIST_CAP, n));
}

/**
 * Reads LIST_IDS from its start, adding the children of each shortcut at its end, until every part is read; `tail`
 * parts are there at first. Returns the final length, or -1 when the list would outgrow `limit`.
 */
function openList(chA: Int32Array, chB: Int32Array, tail: number, limit: number): number {
  for (let j = 0; j < tail; j++) {
    const x = LIST_IDS[j]!,
      a = chA[x]!;
    if (a < 0) LIST_KID[j] = a;
    else {
      if (tail + 2 > limit) return -1;
      LIST_KID[j] = tail;
      LIST_IDS[tail] = a;
      LIST_IDS[tail + 1] = chB[x]!;
      tail += 2;
    }
  }
  return tail;
}

/**
 * Shortcuts whose roads are kept from one query to the next (see ShortcutUnpacker.kept): at least this many road
 * edges (shorter ones open in a few cache misses), at most `KEEP_EDGES` road edges in all (4 bytes each).
 */
const KEEP_MIN = 32;
const KEEP_EDGES = 2 << 20;
let keepMin = KEEP_MIN,
  keepMax = KEEP_EDGES;

/** Tests: keep shortcuts of at least `min` road edges, `max` in all (from the next one kept on). */
export function setUnpackKeep(min = KEEP_MIN, max = KEEP_EDGES): void {
  keepMin = min;
  keepMax = max;
}

/**
 * Opens a path of CH edges into the road edges it stands for: one per routing query (CHQuery), which calls forget()
 * at the start of each search.
 */
export class ShortcutUnpacker {
  constructor(private readonly ch: CHArrays) {}

  /** A new search: the roads remembered so far belong to the last one's trees. */
  forget(): void {
    this.unpacked.clear();
  }

  /**
   * Graph edge ids (original edges) of the CH edges `packed`, in driving order.
   *
   * The shortcuts are opened breadth first: every part found goes to the end of one list, whose entries are then
   * read in turn, so consecutive lookups in the (large, randomly accessed) chA/chB arrays do not depend on each
   * other and overlap in memory, where a descent waits for each before the next. The list keeps each part's
   * children, and a walk over it (small, in cache) writes the road in driving order.
   *
   * Paths through one search's trees share their CH edges near the seeds (the alternatives share them with the
   * primary), so the road of every CH edge unpacked since the last forget() is remembered and copied instead; and
   * long routes across a country share the shortcuts high in the hierarchy (its highways), so the roads of long
   * shortcuts are kept across queries too (`kept`).
   */
  roads(packed: readonly number[]): Uint32Array {
    const { ch } = this;
    const roots = packed.length;
    const known = packed.map((e) => this.unpacked.get(e) ?? this.keptRoad(e));
    // the list starts with the roots not known already; rootAt[r] is root r's place there
    const rootAt: number[] = [];
    const fresh: number[] = [];
    for (let r = 0; r < roots; r++) {
      rootAt.push(fresh.length);
      if (!known[r]) fresh.push(packed[r]!);
    }
    let tail = -1,
      kid = LIST_KID;
    if (fresh.length <= listLimit) {
      LIST_IDS.set(fresh);
      tail = openList(ch.chA, ch.chB, fresh.length, listLimit);
    }
    if (tail < 0) {
      this.reserveParts(fresh.length);
      this.ids.set(fresh);
      tail = this.openParts(fresh.length);
      kid = this.kid;
    }
    // the road: each root's leaves, left to right (the list holds more parts than leaves: room enough)
    let room = tail;
    for (const k of known) if (k) room += k[2] - k[1];
    this.reserve(room);
    const road = this.road;
    const starts: number[] = [];
    let n = 0;
    for (let r = 0; r < roots; r++) {
      starts.push(n);
      const seen = known[r];
      if (seen) {
        road.set(seen[0].subarray(seen[1], seen[2]), n);
        n += seen[2] - seen[1];
        continue;
      }
      let stack = this.stack,
        top = 0;
      stack[top++] = rootAt[r]!;
      while (top > 0) {
        const k = kid[stack[--top]!]!;
        if (k < 0) road[n++] = -1 - k;
        else {
          if (top + 2 > stack.length) {
            const s = new Int32Array(2 * stack.length);
            s.set(stack);
            stack = this.stack = s;
          }
          stack[top++] = k + 1;
          stack[top++] = k;
        }
      }
    }
    const out = road.slice(0, n);
    for (let r = 0; r < roots; r++) {
      if (known[r]) continue;
      const e = packed[r]!,
        start = starts[r]!,
        end = r + 1 < roots ? starts[r + 1]! : n;
      this.unpacked.set(e, [out, start, end]);
      if (end - start >= keepMin) this.keep(e, out.slice(start, end));
    }
    return out;
  }

  /**
   * Roads of long shortcuts from earlier queries, least recently used first (a Map iterates in insertion order, and
   * a hit is moved to the end), `keptEdges` road edges in all. Per thread: 8 MB at most; on a 600-copy country, 1,000
   * long routes unpacked 6,400 distinct such shortcuts (4.5 MB), and after the first 500, 75-86% of their road
   * edges came from shortcuts an earlier query had opened.
   */
  private readonly kept = new Map<number, Uint32Array>();
  private keptEdges = 0;

  private keptRoad(e: number): [road: Uint32Array, start: number, end: number] | undefined {
    const road = this.kept.get(e);
    if (!road) return undefined;
    this.kept.delete(e);
    this.kept.set(e, road);
    return [road, 0, road.length];
  }

  private keep(e: number, road: Uint32Array): void {
    // (a path may hold a CH edge twice: a via path that loops)
    if (road.length > keepMax || this.kept.has(e)) return;
    for (const [old, r] of this.kept) {
      if (this.keptEdges + road.length <= keepMax) break;
      this.kept.delete(old);
      this.keptEdges -= r.length;
    }
    this.kept.set(e, road);
    this.keptEdges += road.length;
  }

  /** The roads of CH edges unpacked since the last forget(): the array holding each and its range there. */
  private readonly unpacked = new Map<number, [road: Uint32Array, start: number, end: number]>();
  /** Unpacking scratch: the list of a path too long for LIST_CAP, the walk's stack and the road being written. */
  private ids = new Int32Array(0);
  private kid = new Int32Array(0);
  private stack = new Int32Array(256);
  private road = new Uint32Array(1 << 14);

  /** openList in this unpacker's own growable arrays. */
  private openParts(tail: number): number {
    const { chA, chB } = this.ch;
    let ids = this.ids,
      kid = this.kid,
      cap = ids.length;
    for (let j = 0; j < tail; j++) {
      const x = ids[j]!,
        a = chA[x]!;
      if (a < 0) kid[j] = a;
      else {
        if (tail + 2 > cap) {
          this.reserveParts(tail + 2);
          ids = this.ids;
          kid = this.kid;
          cap = ids.length;
        }
        kid[j] = tail;
        ids[tail] = a;
        ids[tail + 1] = chB[x]!;
        tail += 2;
      }
    }
    return tail;
  }

  private reserveParts(n: number): void {
    if (n <= this.ids.length) return;
    const cap = Math.max(n, 2 * this.ids.length);
    const ids = new Int32Array(cap),
      kid = new Int32Array(cap);
    ids.set(this.ids);
    kid.set(this.kid);
    this.ids = ids;
    this.kid = kid;
  }

  private reserve(n: number): void {
    if (n <= this.road.length) return;
    const r = new Uint32Array(Math.max(n, 2 * this.road.length));
    r.set(this.road);
    this.road = r;
  }
}
