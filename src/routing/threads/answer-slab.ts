/**
 * A routing thread's answer, written where the HTTP thread reads it: a SharedArrayBuffer the thread keeps and
 * writes each leg into (route-record.ts encodeLeg), posted by reference. Posted as bytes, a long route's 120 KB leg
 * was written into fresh memory, then copied by postMessage on the routing thread (in fresh memory again) and once
 * more on the HTTP thread: three copies and their page faults, 0.15-0.5 ms at 600 copies. Now it is one copy, made
 * by the HTTP thread into the buffer the route cache keeps (`takeAnswer`).
 *
 * The first word says whether the HTTP thread has taken the leg. A thread whose last answer was never taken (its
 * query was abandoned after it answered) writes the next one to a new buffer, so a leg is never overwritten before
 * it is read.
 */
export interface SharedLeg {
  buf: SharedArrayBuffer;
  len: number;
}

const HEADER = 8;
const TAKEN = 0,
  WAITING = 1;

export class AnswerSlab {
  private buf: SharedArrayBuffer;

  constructor(bytes = 1 << 18) {
    this.buf = new SharedArrayBuffer(HEADER + bytes);
  }

  /** The leg `write` writes into the room it asks for (route-record.ts writeLeg), as the HTTP thread reads it. */
  hold(write: (room: (len: number) => Uint8Array) => void): SharedLeg {
    let len = -1;
    write((n) => this.claim((len = n)));
    if (len < 0) throw new Error('no leg was written');
    return { buf: this.buf, len };
  }

  private claim(len: number): Uint8Array {
    const cap = this.buf.byteLength - HEADER;
    if (Atomics.load(new Int32Array(this.buf, 0, 1), 0) !== TAKEN || len > cap)
      this.buf = new SharedArrayBuffer(HEADER + (len > cap ? Math.max(len, 2 * cap) : cap));
    Atomics.store(new Int32Array(this.buf, 0, 1), 0, WAITING);
    return new Uint8Array(this.buf, HEADER, len);
  }
}

/** The HTTP thread's copy of the leg, after which the routing thread may write its next answer there. */
export function takeAnswer(leg: SharedLeg): Buffer {
  const out = Buffer.allocUnsafeSlow(leg.len);
  out.set(new Uint8Array(leg.buf, HEADER, leg.len));
  Atomics.store(new Int32Array(leg.buf, 0, 1), 0, TAKEN);
  return out;
}
