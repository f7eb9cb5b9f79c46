/**
 * The search graphs as one block per node (CHArrays.chFirst, chAdj), from the up and down edge lists (CSR of edge
 * ids; core edges in both). A search settling u reads its block in one run: the count, then every neighbour with
 * the weight and edge id beside it. Reading them through the lists and three edge arrays took up to seven cache
 * misses a node on a country graph, most of a long query's time: at 600 copies the query runs in 0.57x the time.
 * `memory` makes the two arrays' buffers (shared ones for a graph the routing threads share).
 */
export function searchAdjacency(
  chHead: Uint32Array,
  chTail: Uint32Array,
  chW: Uint32Array,
  upFirst: Uint32Array,
  upEdge: Uint32Array,
  dnFirst: Uint32Array,
  dnEdge: Uint32Array,
  memory: (bytes: number) => ArrayBufferLike = (b) => new ArrayBuffer(b),
): { chFirst: Uint32Array; chAdj: Uint32Array } {
  const n = upFirst.length - 1;
  const chFirst = new Uint32Array(memory(4 * (n + 1)));
  const len = n + 3 * (upFirst[n]! + dnFirst[n]!);
  const chAdj = new Uint32Array(memory(4 * len));
  let at = 0;
  for (let u = 0; u < n; u++) {
    chFirst[u] = at;
    chAdj[at++] = upFirst[u + 1]! - upFirst[u]!;
    for (let i = upFirst[u]!; i < upFirst[u + 1]!; i++) {
      const e = upEdge[i]!;
      chAdj[at++] = chHead[e]!;
      chAdj[at++] = chW[e]!;
      chAdj[at++] = e;
    }
    for (let i = dnFirst[u]!; i < dnFirst[u + 1]!; i++) {
      const e = dnEdge[i]!;
      chAdj[at++] = chTail[e]!;
      chAdj[at++] = chW[e]!;
      chAdj[at++] = e;
    }
  }
  chFirst[n] = at;
  return { chFirst, chAdj };
}
