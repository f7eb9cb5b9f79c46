import { GrowU32 } from './grow.js';
import { indexOfSorted, lowerBound } from '../../core/sorted.js';
import type { OsmRoads } from './osm-read.js';
import type { BaseEdges, SplitResult } from './restrictions.js';

/**
 * Via-way turn restrictions, applied in the graph by duplicating the via path. A restriction is a sequence of base
 * edges: one of `from` (entering the via path's first node u), the `via` edges u -> ... -> w in order, then the
 * turn at w (`no_*`: not onto `to`; `only_*`: only onto `to`). A vehicle that has driven a prefix of that sequence
 * is in a different state from one that reached the same node another way, so the state becomes part of the node:
 * the from-edges end at a copy u' of u, the via edges run between copies u' -> ... -> w', every other out-edge of
 * an intermediate copy leaves the via path for the original network (turning off the via way half-way is allowed),
 * and w' keeps the out-edges of w that the restriction allows. Plain Dijkstra/CH over the result respects the
 * restrictions exactly, with no change to the search code.
 *
 * In general a copy stands for the set of restriction prefixes the last edges driven match (as in Aho-Corasick),
 * so restrictions sharing a from-edge or a via path share copies, and a via edge that is also another restriction's
 * from-edge starts that one too. This runs after via-node splitting (restrictions.ts), over the split graph: a
 * copy's out-edges are those of the split node it copies, so via-node restrictions on the via path still hold.
 *
 * One deliberate addition: at a copy on the via path, the U-turn back along the edge just driven is not offered.
 * Otherwise a route could turn round on the via way and drive it again from its original nodes, outside the
 * restriction (e.g. a `no_u_turn` across a dual carriageway's median, defeated by going across, back and across
 * again). Turning back there returns to a node the route has already passed, so it only ever pays off as a way
 * round a restriction; a destination on the via way is still reached from its either end.
 *
 * Copies are few (one per node of each via path, shared where restrictions share a prefix) and are numbered after
 * the split graph's nodes; original edges keep their positions and the copies' edges follow them, so a segment's
 * first graph edge (where a route that starts on it begins, see path.ts) is still the original network's.
 */
export interface ViaWayRestriction {
  /** Base edges entering the via path's first node. */
  from: number[];
  /** Base edges of the via path in driving order (at least one). */
  via: number[];
  /** Base edges leaving the via path's last node. */
  to: number[];
  only: boolean;
}

export function applyViaWayRestrictions(
  baseNodes: number,
  e: BaseEdges,
  split: SplitResult,
  restrictions: ViaWayRestriction[],
): SplitResult {
  const rs = restrictions.filter((r) => r.from.length && r.via.length && r.to.length);
  if (!rs.length) return split;
  // Patterns: one per (restriction, from-edge), the edge sequence [from, ...via]. A position g is one element of
  // one pattern (patterns laid end to end); a state is the sorted list of positions the edges driven last match.
  const seqAt = new GrowU32(),
    patOf = new GrowU32(),
    startOf = new GrowU32(); // position of its pattern's first element
  const patRestriction: number[] = [];
  rs.forEach((r, ri) => {
    for (const f of r.from) {
      const p = patRestriction.push(ri) - 1,
        s = seqAt.length;
      for (const b of [f, ...r.via]) {
        seqAt.push(b);
        patOf.push(p);
        startOf.push(s);
      }
    }
  });
  const seq = seqAt.view(),
    pat = patOf.view(),
    start = startOf.view();
  const G = seq.length;
  const isLast = (g: number) => g + 1 === G || pat[g + 1] !== pat[g];
  // Positions that start a pattern, sorted by their base edge (binary search), and a bitset of base edges that
  // start one or occur anywhere in one.
  const nbe = e.tail.length;
  const starts: number[] = [];
  for (let g = 0; g < G; g++) if (start[g] === g) starts.push(g);
  starts.sort((a, b) => seq[a]! - seq[b]! || a - b);
  const startBase = Uint32Array.from(starts, (g) => seq[g]!),
    startPos = Uint32Array.from(starts);
  const isStart = new Uint8Array((nbe + 7) >>> 3),
    inPattern = new Uint8Array((nbe + 7) >>> 3);
  for (const b of startBase) isStart[b >>> 3]! |= 1 << (b & 7);
  for (const b of seq) inPattern[b >>> 3]! |= 1 << (b & 7);
  const bit = (a: Uint8Array, i: number) => (a[i >>> 3]! & (1 << (i & 7))) !== 0;
  const startsWith = (b: number, out: number[]) => {
    if (!bit(isStart, b)) return;
    for (let k = lowerBound(startBase, b); k < startBase.length && startBase[k] === b; k++) out.push(startPos[k]!);
  };
  /** The state after driving base edge b in state S (sorted positions; empty = the original network). */
  const advance = (S: readonly number[], b: number): number[] => {
    const out: number[] = [];
    for (const g of S) if (!isLast(g) && seq[g + 1] === b) out.push(g + 1);
    startsWith(b, out);
    return out.sort((x, y) => x - y);
  };
  /** Whether base edge b may be driven in state S (S is not empty: a copy's state). */
  const allowed = (S: readonly number[], b: number): boolean => {
    let onVia = false,
      continues = false;
    for (const g of S) {
      if (g > start[g]!) onVia = true;
      if (isLast(g)) {
        const r = rs[patRestriction[pat[g]!]!]!;
        const hit = r.to.includes(b);
        if (r.only ? !hit : hit) return false;
      } else if (seq[g + 1] === b) continues = true;
    }
    // No U-turn back along the via way (see above): b returns to the node the last edge came from.
    const last = seq[S[0]!]!;
    return !(onVia && !continues && e.head[b] === e.tail[last]);
  };

  // Out-edges (CSR) of the split-graph nodes copies can stand for: heads of edges whose base edge is in a pattern.
  const m0 = split.tail.length,
    n0 = split.nodes;
  const isNeeded = new Uint8Array((n0 + 7) >>> 3);
  for (let i = 0; i < m0; i++) {
    if (!bit(inPattern, split.base[i]!)) continue;
    const h = split.head[i]!;
    isNeeded[h >>> 3]! |= 1 << (h & 7);
  }
  const neededList: number[] = [];
  for (let v = 0; v < n0; v++) if (bit(isNeeded, v)) neededList.push(v);
  const needed = Uint32Array.from(neededList);
  const rankOf = (v: number): number => indexOfSorted(needed, v);
  const outFirst = new Uint32Array(needed.length + 1);
  for (let i = 0; i < m0; i++) if (bit(isNeeded, split.tail[i]!)) outFirst[rankOf(split.tail[i]!) + 1]!++;
  for (let k = 0; k < needed.length; k++) outFirst[k + 1]! += outFirst[k]!;
  const outEdge = new Uint32Array(outFirst[needed.length]!);
  const fill = outFirst.slice(0, needed.length);
  for (let i = 0; i < m0; i++) if (bit(isNeeded, split.tail[i]!)) outEdge[fill[rankOf(split.tail[i]!)]!++] = i;

  // Copies, keyed by (split node, state): a handful per restriction, so a Map keyed by that pair is small.
  const copyBase = split.copyBase.slice();
  const copyOfKey = new Map<string, number>();
  const copyNode: number[] = [],
    copyState: number[][] = [];
  let nodes = n0;
  const copyOf = (S: number[], v: number): number => {
    const key = `${v}:${S.join(',')}`;
    let c = copyOfKey.get(key);
    if (c === undefined) {
      copyOfKey.set(key, (c = nodes++));
      copyNode.push(v);
      copyState.push(S);
      copyBase.push(v < baseNodes ? v : split.copyBase[v - baseNodes]!);
    }
    return c;
  };
  // Original edges keep their place; those that start a pattern now end at the copy for it.
  const head = split.head.slice();
  for (let i = 0; i < m0; i++) {
    const b = split.base[i]!;
    if (!bit(isStart, b)) continue;
    const S: number[] = [];
    startsWith(b, S);
    head[i] = copyOf(S, split.head[i]!);
  }
  // Each copy's out-edges: the split node's, filtered by the restrictions completed in its state, each leading to
  // the copy for the state it makes (or back to the original network). New copies join the end of the queue.
  const tail2 = new GrowU32(),
    head2 = new GrowU32(),
    base2 = new GrowU32();
  for (let c = 0; c < copyNode.length; c++) {
    const S = copyState[c]!,
      k = rankOf(copyNode[c]!);
    for (let j = outFirst[k]!; j < outFirst[k + 1]!; j++) {
      const i = outEdge[j]!,
        b = split.base[i]!;
      if (!allowed(S, b)) continue;
      const S2 = advance(S, b);
      tail2.push(n0 + c);
      head2.push(S2.length ? copyOf(S2, split.head[i]!) : split.head[i]!);
      base2.push(b);
    }
  }
  const cat = (a: Uint32Array, b: Uint32Array) => {
    const out = new Uint32Array(a.length + b.length);
    out.set(a);
    out.set(b, a.length);
    return out;
  };
  return {
    nodes,
    copyBase,
    tail: cat(split.tail, tail2.view()),
    head: cat(head, head2.view()),
    base: cat(split.base, base2.view()),
    applied: split.applied,
  };
}

export interface ViaWayResolution {
  restrictions: ViaWayRestriction[];
  /** Relations applied (each may give several restrictions, e.g. a from-way that enters the via path twice). */
  applied: number;
  /** Relations with nothing to apply: a member is not a drivable road here, or the sequence cannot be driven. */
  notDrivable: number;
  /** Relations that cannot be applied: consecutive members share no node (or meet only where the via way is empty). */
  disconnected: number;
  /** Relations whose members meet at too many places to tell which path they mean. */
  ambiguous: number;
}

const MAX_READINGS = 8;

/**
 * Maps via-way relations (OSM way ids) to base-edge restrictions. Consecutive members must share a node (an end of
 * one of them when they share several); each via way is driven between the node it shares with the member before it
 * and the one it shares with the member after it. Via ways listed out of order are chained in the order they
 * connect. A relation that reads several ways (members meeting at several ends) gives one restriction per reading
 * that can be driven, up to a few readings.
 */
export function resolveViaWayRestrictions(
  o: Pick<OsmRoads, 'restrictions' | 'wayIndexByOsmId' | 'refStart' | 'refs' | 'found'>,
  e: BaseEdges,
  edgesOf: (w: number) => Uint32Array,
): ViaWayResolution {
  const res: ViaWayResolution = { restrictions: [], applied: 0, notDrivable: 0, disconnected: 0, ambiguous: 0 };
  const refsOf = (w: number) => o.refs.subarray(o.refStart[w], o.refStart[w + 1]);
  const isEnd = (w: number, v: number) => o.refs[o.refStart[w]!] === v || o.refs[o.refStart[w + 1]! - 1] === v;
  /** Nodes two ways share (present in the extract); the ends of either way when some of them are shared. */
  const shared = (a: number, b: number): number[] => {
    const ra = Uint32Array.from(refsOf(a)).sort();
    const out: number[] = [];
    for (const v of refsOf(b)) {
      if (o.found[v] && !out.includes(v) && indexOfSorted(ra, v) >= 0) out.push(v);
    }
    const ends = out.filter((v) => isEnd(a, v) || isEnd(b, v));
    return ends.length ? ends : out;
  };
  const joinsOf = (ways: number[]): number[][] | undefined => {
    const joins: number[][] = [];
    for (let i = 0; i + 1 < ways.length; i++) {
      const j = shared(ways[i]!, ways[i + 1]!);
      if (!j.length) return undefined;
      joins.push(j);
    }
    return joins;
  };
  /** Via ways in the order they connect from the from-way, when that order is unique. */
  const chain = (from: number, vias: number[], to: number): number[] | undefined => {
    const left = vias.slice(),
      out = [from];
    while (left.length) {
      const next = left.filter((v) => shared(out[out.length - 1]!, v).length);
      if (next.length !== 1) return undefined;
      out.push(next[0]!);
      left.splice(left.indexOf(next[0]!), 1);
    }
    return [...out, to];
  };
  const edgeOf = (w: number, a: number, b: number): number => {
    for (const i of edgesOf(w)) if (e.tail[i] === a && e.head[i] === b) return i;
    return -1;
  };
  /** Base edges along way w from node a to node b (the nearest pair of their occurrences): -1 when a stretch
   *  cannot be driven that way, undefined when w does not run from a to b. */
  const along = (w: number, a: number, b: number): number[] | -1 | undefined => {
    const refs = refsOf(w);
    const pos = (v: number) => refs.reduce<number[]>((out, x, i) => (x === v ? [...out, i] : out), []);
    let pa = -1,
      pb = -1;
    for (const i of pos(a))
      for (const j of pos(b)) if (i !== j && (pa < 0 || Math.abs(i - j) < Math.abs(pa - pb))) [pa, pb] = [i, j];
    if (pa < 0) return undefined;
    const step = pb > pa ? 1 : -1,
      out: number[] = [];
    for (let i = pa; i !== pb; i += step) {
      const x = refs[i]!,
        y = refs[i + step]!;
      if (x === y) continue;
      const ed = o.found[x] && o.found[y] ? edgeOf(w, x, y) : -1;
      if (ed < 0) return -1;
      out.push(ed);
    }
    return out;
  };
  for (const r of o.restrictions) {
    if (!r.viaWays) continue;
    const idx = [r.fromWay, ...r.viaWays, r.toWay].map((id) => o.wayIndexByOsmId.get(id));
    if (idx.some((w) => w === undefined)) {
      res.notDrivable++;
      continue;
    }
    let ways = idx as number[];
    let joins = joinsOf(ways);
    if (!joins && r.viaWays.length > 1) {
      const chained = chain(ways[0]!, ways.slice(1, -1), ways[ways.length - 1]!);
      if (chained) joins = joinsOf((ways = chained));
    }
    if (!joins) {
      res.disconnected++;
      continue;
    }
    const readings = joins.reduce((n, j) => n * j.length, 1);
    if (readings > MAX_READINGS) {
      res.ambiguous++;
      continue;
    }
    let geometry = false,
      drivable = false;
    for (let k = 0; k < readings; k++) {
      // reading k picks one meeting node per consecutive pair (mixed radix over the candidates)
      const at: number[] = [];
      let rest = k;
      for (const j of joins) {
        at.push(j[rest % j.length]!);
        rest = Math.floor(rest / j.length);
      }
      const via: number[] = [];
      let ok = true,
        broken = false;
      for (let v = 1; v + 1 < ways.length && !broken; v++) {
        const p = along(ways[v]!, at[v - 1]!, at[v]!);
        if (p === undefined) broken = true;
        else if (p === -1) ok = false;
        else via.push(...p);
      }
      if (broken || !via.length) continue;
      geometry = true;
      const from = Array.from(edgesOf(ways[0]!)).filter((i) => e.head[i] === at[0]);
      const to = Array.from(edgesOf(ways[ways.length - 1]!)).filter((i) => e.tail[i] === at[at.length - 1]);
      if (!ok || !from.length || !to.length) continue;
      drivable = true;
      res.restrictions.push({ from, via, to, only: r.only });
    }
    if (drivable) res.applied++;
    else if (geometry) res.notDrivable++;
    else res.disconnected++;
  }
  return res;
}
