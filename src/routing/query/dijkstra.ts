import FlatQueue from 'flatqueue';
import type { Seed } from './ch-query.js';

/**
 * Plain bidirectional Dijkstra on the uncontracted graph: the baseline the benchmark compares the contraction
 * hierarchy against, and an independent oracle for the tests (CH distances must equal it).
 */
export interface PlainGraph {
  n: number;
  first: Uint32Array;
  head: Uint32Array;
  ms: Uint32Array;
}

export class BidiDijkstra {
  private readonly rFirst: Uint32Array;
  private readonly rTail: Uint32Array;
  private readonly rW: Uint32Array;
  private readonly dF: Float64Array;
  private readonly dB: Float64Array;
  private readonly sF: Uint32Array;
  private readonly sB: Uint32Array;
  private ep = 0;
  private readonly qF = new FlatQueue<number>();
  private readonly qB = new FlatQueue<number>();
  settled = 0;

  constructor(private readonly g: PlainGraph) {
    const { n, first, head, ms } = g;
    // Reverse adjacency (by head) for the backward search.
    this.rFirst = new Uint32Array(n + 1);
    for (let i = 0; i < head.length; i++) this.rFirst[head[i]! + 1]!++;
    for (let v = 0; v < n; v++) this.rFirst[v + 1]! += this.rFirst[v]!;
    const fill = this.rFirst.slice(0, n);
    this.rTail = new Uint32Array(head.length);
    this.rW = new Uint32Array(head.length);
    for (let u = 0; u < n; u++) {
      for (let i = first[u]!; i < first[u + 1]!; i++) {
        const at = fill[head[i]!]!++;
        this.rTail[at] = u;
        this.rW[at] = ms[i]!;
      }
    }
    this.dF = new Float64Array(n);
    this.dB = new Float64Array(n);
    this.sF = new Uint32Array(n);
    this.sB = new Uint32Array(n);
  }

  /** Shortest cost (ms) from the sources to the targets, or Infinity. */
  run(sources: Seed[], targets: Seed[]): number {
    const ep = ++this.ep;
    const { dF, dB, sF, sB, qF, qB, g } = this;
    qF.clear();
    qB.clear();
    this.settled = 0;
    for (const [v, o] of sources)
      if (sF[v] !== ep || o < dF[v]!) {
        sF[v] = ep;
        dF[v] = o;
        qF.push(v, o);
      }
    for (const [v, o] of targets)
      if (sB[v] !== ep || o < dB[v]!) {
        sB[v] = ep;
        dB[v] = o;
        qB.push(v, o);
      }
    let best = Infinity;
    for (const [v] of sources) if (sB[v] === ep) best = Math.min(best, dF[v]! + dB[v]!);
    while (qF.length && qB.length) {
      if (qF.peekValue()! + qB.peekValue()! >= best) break;
      if (qF.length <= qB.length) {
        const d = qF.peekValue()!,
          u = qF.pop()!;
        if (d > dF[u]!) continue;
        this.settled++;
        for (let i = g.first[u]!; i < g.first[u + 1]!; i++) {
          const v = g.head[i]!,
            nd = d + g.ms[i]!;
          if (sF[v] !== ep || nd < dF[v]!) {
            sF[v] = ep;
            dF[v] = nd;
            qF.push(v, nd);
          }
          if (sB[v] === ep && nd + dB[v]! < best) best = nd + dB[v]!;
        }
      } else {
        const d = qB.peekValue()!,
          u = qB.pop()!;
        if (d > dB[u]!) continue;
        this.settled++;
        for (let i = this.rFirst[u]!; i < this.rFirst[u + 1]!; i++) {
          const v = this.rTail[i]!,
            nd = d + this.rW[i]!;
          if (sB[v] !== ep || nd < dB[v]!) {
            sB[v] = ep;
            dB[v] = nd;
            qB.push(v, nd);
          }
          if (sF[v] === ep && nd + dF[v]! < best) best = nd + dF[v]!;
        }
      }
    }
    return best;
  }
}
