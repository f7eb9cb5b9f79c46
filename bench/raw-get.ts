import { connect } from 'node:net';

/** One answer as the overload benchmarks record it. */
export interface Answer {
  status: number;
  ms: number;
  retryAfter: boolean;
  source?: string;
}

/**
 * A GET over its own HTTP/1.1 connection (`Connection: close`), read to the end. A load generator on the same two
 * cores as the server must cost little per request, or its own event loop becomes what the benchmark measures:
 * `fetch` spends about a millisecond of client CPU per request, so 600 of them at once delayed every answer the
 * client read by hundreds of milliseconds. This costs a socket and a few string operations. status 0 = connection
 * failed or the client gave up after `timeoutMs`.
 */
export function rawGet(
  port: number,
  path: string,
  headers: Record<string, string> = {},
  timeoutMs = 45_000,
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const sock = connect(port, '127.0.0.1');
    let done = false;
    const finish = (a: Omit<Answer, 'ms'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...a, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => finish({ status: 0, retryAfter: false }), timeoutMs);
    let head = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    sock.write(`${head}\r\n`);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', () => finish({ status: 0, retryAfter: false }));
    sock.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const status = end < 0 ? 0 : Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const headLines = end < 0 ? '' : text.slice(0, end).toLowerCase();
      finish({
        status,
        retryAfter: headLines.includes('\r\nretry-after:'),
        source: /\r\nx-tile-source: *([^\r]*)/.exec(headLines)?.[1],
      });
    });
  });
}

/**
 * One kept-alive HTTP/1.1 connection for requests in sequence, as a browser or a proxy's upstream pool holds one: the
 * time of each answer without a connection set-up (which, in a burst of a thousand new connections, waits in the
 * kernel's accept queue behind them). Answers must carry Content-Length (the appliance always sends it).
 */
export class KeptAlive {
  /** Bytes of the answer under way; its head is parsed once, then the body is only counted (answers can be MBs). */
  private chunks: Buffer[] = [];
  private have = 0;
  private need = -1;
  /** Where the body starts in the answer's bytes. */
  private head = 0;
  private status = 0;
  private waiting?: (status: number, body?: Buffer, at?: number) => void;
  /** Whether the answer under way is kept (its body handed to the caller) or only counted. */
  private keep = false;
  private readonly sock;

  constructor(port: number) {
    this.sock = connect(port, '127.0.0.1');
    this.sock.setNoDelay(true);
    this.sock.on('data', (c: Buffer) => {
      this.chunks.push(c);
      this.have += c.length;
      this.parse();
    });
    this.sock.on('error', () => this.waiting?.(0));
    this.sock.on('close', () => this.waiting?.(0));
  }

  get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; ms: number }> {
    return this.request('GET', path, headers);
  }

  /**
   * One request; `ms` runs until the answer's last byte is read. The body is dropped, or handed back with `keepBody`
   * (to be parsed after the clock stopped: parsing is the client's work, not the server's).
   */
  request(
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: string,
    keepBody = false,
  ): Promise<{ status: number; ms: number; body?: Buffer }> {
    const t0 = performance.now();
    this.keep = keepBody;
    // closed while idle (uWS closes a connection idle for 10 s): a write would fail with no event, and the answer
    // never come; status 0, as for a connection lost mid-answer
    if (this.sock.destroyed) return Promise.resolve({ status: 0, ms: 0 });
    return new Promise((resolve) => {
      this.waiting = (status, answer, at = performance.now()) => {
        const ms = at - t0;
        this.waiting = undefined;
        resolve({ status, ms, body: answer });
      };
      let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`;
      for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
      if (body !== undefined) head += `Content-Length: ${Buffer.byteLength(body)}\r\n`;
      this.sock.write(`${head}\r\n${body ?? ''}`);
    });
  }

  private parse(): void {
    if (this.need < 0) {
      const buf = Buffer.concat(this.chunks);
      this.chunks = [buf];
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      this.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      this.head = end + 4;
      this.need = end + 4 + Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    }
    if (this.have < this.need) return;
    const at = performance.now();
    const done = this.chunks;
    // Requests go one at a time, so bytes past this answer are rare; they sit at the end of the last chunk.
    const over = this.have - this.need;
    const last = this.chunks[this.chunks.length - 1]!;
    const rest =
      over <= last.length ? last.subarray(last.length - over) : Buffer.concat(this.chunks).subarray(this.need);
    this.chunks = over ? [rest] : [];
    this.have = rest.length;
    const answer = this.keep ? Buffer.concat(done).subarray(this.head, this.need) : undefined;
    this.need = -1;
    this.waiting?.(this.status, answer, at);
  }

  close(): void {
    this.sock.destroy();
  }
}
