/**
 * Node numbering for memory locality. Answering a cross-country route walks ~10^4 road edges per path (unpacking,
 * geometry, maneuvers), and each step reads the node's and the edge's entries in arrays of millions: numbered by
 * OSM id, only a third of the edges lead to the next node id, so most steps miss the cache. Numbered here along
 * the roads (a walk that follows each way as far as it goes before starting another), nine in ten edges lead to
 * the next or previous id, and every node and edge array is read in runs; ch-build.ts then stores the hierarchy's
 * edges grouped by node in the same order. Same graph, other numbers: routes, costs and geometry are unchanged, up
 * to the order in which equal-cost ties are met. OSM nodes keep ids below baseNodes and junction copies above it.
 */

/** The base graph as build-graph.ts makes it (CSR by tail) with the snapping segments' node and edge ids. */
export interface Numbered {
  first: Uint32Array;
  head: Uint32Array;
  ms: Uint32Array;
  dist: Float32Array;
  way: Uint32Array;
  lat: Float64Array;
  lon: Float64Array;
  segA: Uint32Array;
  segB: Uint32Array;
  segEdges: Uint32Array;
  /** A per-node flag array (chains.ts junction flags), renumbered with the nodes. */
  junction: Uint8Array;
}

/** The same graph and segments, renumbered (new arrays; the caller drops the old ones). */
export function renumberForLocality<T extends Numbered>(g: T, baseNodes: number): T {
  const nodeNew = nodeOrder(g, baseNodes);
  const { first, head, edgeNew } = reorderEdges(g, nodeNew);
  const moved = <A extends Float64Array | Float32Array | Uint32Array | Uint8Array>(a: A, to: Uint32Array): A => {
    const out = new (a.constructor as new (n: number) => A)(a.length);
    for (let i = 0; i < a.length; i++) out[to[i]!] = a[i]!;
    return out;
  };
  const mapped = (a: Uint32Array, to: Uint32Array) => {
    const out = new Uint32Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = to[a[i]!]!;
    return out;
  };
  return {
    ...g,
    first,
    head,
    ms: moved(g.ms, edgeNew),
    dist: moved(g.dist, edgeNew),
    way: moved(g.way, edgeNew),
    lat: moved(g.lat, nodeNew),
    lon: moved(g.lon, nodeNew),
    junction: moved(g.junction, nodeNew),
    segA: mapped(g.segA, nodeNew),
    segB: mapped(g.segB, nodeNew),
    segEdges: mapped(g.segEdges, edgeNew),
  };
}

/**
 * nodeNew[old] = new id. Old ids are taken in order; each one not yet numbered starts a walk: both directions
 * along its roads from it, preferring at every node the edge of the way just driven, numbered as one run
 * (the backward half reversed, then the start, then the forward half).
 */
function nodeOrder(g: Numbered, nb: number): Uint32Array {
  const n = g.first.length - 1;
  const { first, head, way } = g;
  const nodeNew = new Uint32Array(n);
  let nextBase = 0,
    nextCopy = nb;
  const give = (v: number) => (nodeNew[v] = v < nb ? nextBase++ : nextCopy++);
  // one walk's nodes: the backward half is collected first, then numbered in reverse
  let back = new Uint32Array(1024);
  const claimed = new Uint8Array(n);
  /** Walks from v along unclaimed nodes, preferring way w; calls visit for each node reached (not v itself). */
  const walk = (v: number, w: number, visit: (x: number) => void) => {
    for (;;) {
      let next = -1,
        nextWay = -1;
      for (let e = first[v]!; e < first[v + 1]!; e++) {
        const h = head[e]!;
        if (claimed[h]) continue;
        if (next < 0 || (way[e] === w && nextWay !== w)) {
          next = h;
          nextWay = way[e]!;
        }
      }
      if (next < 0) return;
      claimed[next] = 1;
      visit(next);
      v = next;
      w = nextWay;
    }
  };
  for (let s = 0; s < n; s++) {
    if (claimed[s]) continue;
    claimed[s] = 1;
    // the backward half: away from s along its first road, collected then numbered from its far end
    let nBack = 0;
    const firstWay = first[s]! < first[s + 1]! ? way[first[s]!]! : -1;
    walk(s, firstWay, (x) => {
      if (nBack === back.length) {
        const b = new Uint32Array(2 * back.length);
        b.set(back);
        back = b;
      }
      back[nBack++] = x;
    });
    for (let k = nBack - 1; k >= 0; k--) give(back[k]!);
    give(s);
    walk(s, firstWay, give);
  }
  return nodeNew;
}

/** The graph's edges in CSR by new tail (each node's edges in their old order), heads renumbered. */
function reorderEdges(g: Numbered, nodeNew: Uint32Array) {
  const n = g.first.length - 1,
    m = g.head.length;
  const oldOf = new Uint32Array(n);
  for (let v = 0; v < n; v++) oldOf[nodeNew[v]!] = v;
  const first = new Uint32Array(n + 1),
    head = new Uint32Array(m),
    edgeNew = new Uint32Array(m);
  let at = 0;
  for (let u = 0; u < n; u++) {
    first[u] = at;
    const v = oldOf[u]!;
    for (let e = g.first[v]!; e < g.first[v + 1]!; e++) {
      edgeNew[e] = at;
      head[at++] = nodeNew[g.head[e]!]!;
    }
  }
  first[n] = at;
  return { first, head, edgeNew };
}
