import { BroadcastChannel, receiveMessageOnPort } from 'node:worker_threads';
import { route, type ChainSeed, type FoundRoute } from '../query/chains.js';
import type { RoadGraph } from '../road-graph.js';
import { maneuvers } from '../answer/maneuvers.js';
import type { Overview } from '../answer/overview.js';
import type { RoutePath } from '../query/path.js';
import { PathSlab, sharedPath, sharedTurns, type SharedPath, type SharedTurns } from './path-slab.js';
import { pathRecord } from '../answer/route-record.js';
import type { Snap } from '../query/snap.js';
import type { EnginePath } from '../types.js';
import { processWarnings, type Logger } from '../../core/log.js';

/**
 * Routing threads lend each other a hand within one answer. A long route's answer is its search (the hierarchy
 * query, then the alternatives) and then, per path, its maneuvers and its line written out as JSON: ~0.7 ms a path
 * at 600 copies, a third of the answer for three paths. While a thread searches for alternatives, an idle routing
 * thread can assemble and write the primary path (handed over as the search found it: ~0.3 ms of assembling off
 * the searching thread), then the first alternative (queued behind it as soon as it is found) while the searching
 * thread finds and writes the last. Two of the three paths move off the searching thread (~1.4 ms), but the search
 * slows while the other core reads memory too: at 600 copies, one long route at a time on 2 cores, answers take
 * 0.88x as long (bench:routing-pool). When every routing thread is busy with its own query nobody is idle to ask,
 * and a thread writes all its paths itself.
 *
 * Shared words, four per thread (`words[WORDS * slot + k]`):
 * - state: IDLE; RUNNING its own query; WORKING on a job; ABSENT (not started yet); or the number of a job someone
 *   claimed it for and posted.
 *   A thread claims another by compare-and-swap IDLE -> job number, so at most one job is ever offered to a thread.
 * - next: the number of a job queued behind the one a thread writes or is claimed for (0: none), claimed by
 *   compare-and-swap 0 -> job number. An alternative is found while the helper still writes the primary: queued,
 *   it is written there as soon as the primary is done, while the asker writes its own path, instead of by the
 *   asker after it (offered only to an idle helper, the last alternative found none in about 40% of long routes
 *   at 600 copies). The asker takes its jobs back last first, so one not started yet is written by the asker.
 * - replies: counts the answers posted to this thread, so it can sleep on the word until one comes.
 * - written: counts the paths this thread wrote for others (metrics).
 * Jobs travel on a BroadcastChannel named for the helper's slot, answers on one named for the asker's: by name, so a
 * thread that replaces a dead one is reachable without handing it ports. A job's path is not in the message: the
 * asker writes it into its own shared slab (path-slab.ts), which the helper reads in place.
 *
 * A claim (or a queued job) the helper has not taken up yet when the asker wants the result is revoked (job number
 * -> IDLE, or -> 0) and the asker writes the path itself: a helper busy with a query the pool gave it just before
 * is never waited for. A helper that took a job up always answers (with the path, or handing it back), unless it
 * dies: the asker then gives up after `GIVE_UP_MS` and writes the path itself. Answers are the same bytes either way
 * (the same code over the same graph).
 */

/** Shared words per thread; a thread's state is `words[WORDS * slot]`. */
export const WORDS = 4;
const STATE = 0,
  REPLIES = 1,
  WRITTEN = 2,
  NEXT = 3;

const IDLE = 0;
const RUNNING = -1;
const WORKING = -2;
const ABSENT = -3;

export interface HelpInit {
  /** 3 words per routing thread (see above), over a SharedArrayBuffer: `helpWords(threads)`. */
  words: Int32Array;
  /** Channel names are `${channel}:${slot}:job` and `${channel}:${slot}:reply`. */
  channel: string;
  /** Test hook only: hand over paths from this many pieces (default HAND_OVER_MIN_PIECES). */
  minPieces?: number;
}

/** The words for `threads` threads, each ABSENT until its desk opens (a thread still starting is not asked). */
export function helpWords(threads: number): Int32Array {
  const words = new Int32Array(new SharedArrayBuffer(4 * WORDS * threads));
  for (let slot = 0; slot < threads; slot++) words[WORDS * slot + STATE] = ABSENT;
  return words;
}

/** Paths the threads sharing `words` wrote for each other so far. */
export function pathsShared(words: Int32Array): number {
  let n = 0;
  for (let k = WRITTEN; k < words.length; k += WORDS) n += Atomics.load(words, k);
  return n;
}

/** A state a job can be queued behind: writing a path, or claimed for one (a job number). */
const busy = (state: number) => state === WORKING || state > 0;

/** Paths shorter than this many pieces are written where they were found: the hand-over would cost more. */
const HAND_OVER_MIN_PIECES = 256;

/** How long an asker waits for a helper that took its job up before it writes the path itself. */
const GIVE_UP_MS = 100;

interface Job {
  seq: number;
  from: number;
  buildId: string;
  /** An assembled path, or a route as found (the helper assembles it). */
  path?: SharedPath;
  found?: SharedFound;
  label: string;
  overview: Overview;
  locale: 'en' | 'ar';
}

/** A FoundRoute as a job carries it: its ends without the graph, its turns in the asker's slab. */
interface SharedFound {
  from: Snap;
  to: Snap;
  S: ChainSeed[];
  T: ChainSeed[];
  sNode: number;
  tNode: number;
  turns: SharedTurns;
}

interface Reply {
  seq: number;
  /** Absent when the helper handed the job back. */
  path?: EnginePath;
}

/** A path another thread writes: `take()` gives its record, written there or (revoked, given up) here. */
export interface HandedOver {
  take(check?: () => void): EnginePath;
}

/** A routing thread's side of the help: asking the others, and answering them. */
export class HelpDesk {
  private readonly jobs: BroadcastChannel;
  private readonly replies: BroadcastChannel;
  private readonly to = new Map<string, BroadcastChannel>();
  /** Answers read before they were asked for (a thread may have two jobs out), until the end of the query. */
  private readonly early = new Map<number, Reply>();
  private seq = 0;
  private graph: RoadGraph;
  /** Where this thread's handed-over paths are written for the helpers to read (path-slab.ts). */
  private readonly slab = new PathSlab();
  /** Jobs handed over in this query and not taken yet. */
  private out = 0;

  constructor(
    private readonly init: HelpInit,
    private readonly slot: number,
    graph: RoadGraph,
    /** Where a helper's failure to write a path is told (the asker writes that path itself and answers). */
    private readonly log: Logger = processWarnings,
  ) {
    this.graph = graph;
    this.jobs = new BroadcastChannel(`${init.channel}:${slot}:job`);
    this.jobs.onmessage = (e) => this.help((e as { data: Job }).data);
    this.replies = new BroadcastChannel(`${init.channel}:${slot}:reply`);
    // An asker reads its answers synchronously (receive), but one that comes while this thread is back in its event
    // loop would be dispatched there and lost: kept instead (a late answer after a give-up, desks sharing a thread).
    this.replies.onmessage = (e) => {
      const r = (e as { data: Reply }).data;
      this.early.set(r.seq, r);
    };
    // neither channel may keep the thread alive: the pool decides when it ends
    (this.jobs as unknown as { unref(): void }).unref();
    (this.replies as unknown as { unref(): void }).unref();
    // a job queued for a thread that died before taking it will never be taken here: the queue starts empty
    Atomics.store(init.words, WORDS * slot + NEXT, 0);
    Atomics.store(init.words, WORDS * slot + STATE, IDLE);
  }

  /** A reload: jobs for another graph are handed back to their asker. */
  use(graph: RoadGraph): void {
    this.graph = graph;
  }

  /** This thread runs a query of its own until `idle()`: nobody may claim it meanwhile. */
  running(): void {
    Atomics.compareExchange(this.init.words, WORDS * this.slot + STATE, IDLE, RUNNING);
    this.slab.reset();
  }

  idle(): void {
    Atomics.compareExchange(this.init.words, WORDS * this.slot + STATE, RUNNING, IDLE);
    this.early.clear();
    // a query that ended without taking a job (cancelled): its helper may still be reading the path
    if (this.out > 0) this.slab.abandon();
    this.out = 0;
  }

  /**
   * Hands `p` (a path, or a route as found, which the helper then assembles) to an idle routing thread, or queues it
   * behind the job of a busy one; answers undefined when neither is free (or the path is short).
   */
  handOver(p: RoutePath | FoundRoute, label: string, overview: Overview, locale: 'en' | 'ar'): HandedOver | undefined {
    const assembled = 'n' in p;
    if ((assembled ? p.n : p.turns.length) < (this.init.minPieces ?? HAND_OVER_MIN_PIECES)) return undefined;
    const words = this.init.words,
      threads = words.length / WORDS;
    // an idle thread first; else one writing a path (or claimed for one), queued behind it
    for (const queue of [false, true])
      for (let k = 1; k < threads; k++) {
        const helper = (this.slot + k) % threads;
        const seq = this.nextSeq();
        const at = WORDS * helper;
        if (
          queue
            ? !busy(Atomics.load(words, at + STATE)) || Atomics.compareExchange(words, at + NEXT, 0, seq) !== 0
            : Atomics.compareExchange(words, at + STATE, IDLE, seq) !== IDLE
        )
          continue;
        const job: Job = {
          seq,
          from: this.slot,
          buildId: this.graph.meta.buildId,
          ...(assembled ? { path: this.slab.put(p) } : { found: this.shareFound(p) }),
          label,
          overview,
          locale,
        };
        this.channelTo(helper).postMessage(job);
        this.out++;
        return { take: (check) => this.take(at + (queue ? NEXT : STATE), job, check) };
      }
    return undefined;
  }

  private shareFound({ ends: { from, to, S, T }, sNode, turns, tNode }: FoundRoute): SharedFound {
    return { from, to, S, T, sNode, tNode, turns: this.slab.putTurns(turns) };
  }

  close(): void {
    this.jobs.close();
    this.replies.close();
    for (const c of this.to.values()) c.close();
  }

  /** `claim`: the word the job was claimed in (the helper's state, or its next job). */
  private take(claim: number, job: Job, check?: () => void): EnginePath {
    const words = this.init.words;
    this.out--;
    // not taken up yet: revoked (IDLE and "no next job" are both 0), written here
    if (Atomics.compareExchange(words, claim, job.seq, 0) === job.seq) return write(this.graph, job);
    const until = performance.now() + GIVE_UP_MS;
    for (;;) {
      const got = this.early.get(job.seq) ?? this.receive(job.seq);
      if (got) return got.path ?? write(this.graph, job); // handed back without a path
      if (performance.now() > until) {
        this.slab.abandon(); // the helper died with it, or may read it still
        return write(this.graph, job);
      }
      check?.();
      const replies = WORDS * this.slot + REPLIES;
      Atomics.wait(words, replies, Atomics.load(words, replies), 1);
    }
  }

  /** Reads the answers posted so far; answers `seq`'s when among them (keeps the others for later). */
  private receive(seq: number): Reply | undefined {
    let found: Reply | undefined;
    for (;;) {
      const m = receiveMessageOnPort(this.replies as unknown as Parameters<typeof receiveMessageOnPort>[0]);
      if (!m) return found;
      const r = m.message as Reply;
      if (r.seq === seq) found = r;
      else this.early.set(r.seq, r);
    }
  }

  /**
   * The helper's side: writes the path unless the claim was revoked. A job for another graph (a reload under way)
   * is handed back without a path, as is one whose writing failed: the asker writes it (and meets the error).
   */
  private help(job: Job): void {
    const words = this.init.words,
      state = WORDS * this.slot + STATE;
    const mine = job.buildId === this.graph.meta.buildId;
    // whether this thread shows WORKING while it writes (and goes back to IDLE after)
    let working: boolean;
    if (Atomics.compareExchange(words, state, job.seq, mine ? WORKING : IDLE) === job.seq) working = mine;
    else if (Atomics.compareExchange(words, WORDS * this.slot + NEXT, job.seq, 0) === job.seq)
      // queued: the job before it is done; unless someone claimed this thread since, it is busy again
      working = mine && Atomics.compareExchange(words, state, IDLE, WORKING) === IDLE;
    else return; // revoked
    let path: EnginePath | undefined;
    try {
      if (mine) path = write(this.graph, job);
    } catch (e) {
      path = undefined; // handed back: the asker writes it, and meets the error too unless it was this thread's own
      this.log.error('routing thread failed to write a path for another', {
        slot: this.slot,
        for: job.from,
        error: (e as Error)?.stack ?? String(e),
      });
    }
    this.channelReplyTo(job.from).postMessage({ seq: job.seq, path } satisfies Reply);
    if (path) Atomics.add(words, WORDS * this.slot + WRITTEN, 1);
    if (working) Atomics.store(words, state, IDLE);
    Atomics.add(words, WORDS * job.from + REPLIES, 1);
    Atomics.notify(words, WORDS * job.from + REPLIES);
  }

  /** Job numbers are unique across threads (slot in the low byte) and never IDLE or negative. */
  private nextSeq(): number {
    this.seq = (this.seq + 1) & 0x3fffff;
    return ((this.seq || 1) << 8) | this.slot;
  }

  private channelTo(slot: number): BroadcastChannel {
    return this.channel(`${this.init.channel}:${slot}:job`);
  }

  private channelReplyTo(slot: number): BroadcastChannel {
    return this.channel(`${this.init.channel}:${slot}:reply`);
  }

  private channel(name: string): BroadcastChannel {
    let c = this.to.get(name);
    if (!c) {
      c = new BroadcastChannel(name);
      (c as unknown as { unref(): void }).unref();
      this.to.set(name, c);
    }
    return c;
  }
}

/** The path's record, its maneuvers included, as BuiltinEngine.routeSync writes it. */
const write = (g: RoadGraph, j: Job): EnginePath => {
  const f = j.found;
  const p = f
    ? route({ g, from: f.from, to: f.to, S: f.S, T: f.T }, f.sNode, sharedTurns(f.turns), f.tNode)
    : sharedPath(j.path!);
  return pathRecord(g, p, j.label, j.overview, maneuvers(g, p, j.locale));
};
