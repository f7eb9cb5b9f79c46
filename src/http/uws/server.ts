import uWS from 'uWebSockets.js';
import { STATUS_CODES } from 'node:http';
import { existsSync } from 'node:fs';
import { pickRequestId } from '../middleware/request-id.js';
import { nativeServerUnavailable } from './native.js';
import { Backlog } from './backlog.js';
import { closesConnection } from './refusals.js';
import type { HttpReply, HttpRequest, RequestHandler, TransportFailure } from '../types.js';

export interface ListenOptions {
  host: string;
  port: number;
  tls?: { cert: string; key: string };
  /** Trusted reverse-proxy header carrying the client address (its last entry is the one the proxy saw). */
  clientIpHeader?: string;
}

export interface RunningServer {
  port: number;
  url: string;
  close(): void;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The longest URL (path and query) answered; longer ones get 414. */
const MAX_URL_BYTES = 8192;
/** Header fields (names and values) past this many bytes, or past this many fields, get 431. */
const MAX_HEADER_BYTES = 8192;
const MAX_HEADER_FIELDS = 40;
/** Status lines are built once per status, not once per response. */
const STATUS_LINES = new Map<number, string>();
function statusLine(s: number): string {
  let line = STATUS_LINES.get(s);
  if (line === undefined) STATUS_LINES.set(s, (line = `${s} ${STATUS_CODES[s] ?? 'Status'}`));
  return line;
}

const noop = (): void => {};
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** ::ffff:a.b.c.d, an IPv4 client on a dual-stack socket. */
const isMappedIPv4 = (b: Uint8Array): boolean =>
  b[10] === 0xff &&
  b[11] === 0xff &&
  b[0]! + b[1]! + b[2]! + b[3]! + b[4]! + b[5]! + b[6]! + b[7]! + b[8]! + b[9]! === 0;

/**
 * The peer address as text: dotted IPv4 (an IPv4-mapped IPv6 address too, so one client has one spelling), IPv6 as
 * eight groups of four hex digits. Formatted here from the binary address: the text call plus its decoding cost
 * twice as much, and the tile family's per-IP cap asks on every request.
 */
function formatRemoteAddress(binary: ArrayBuffer): string {
  const b = new Uint8Array(binary);
  if (b.length === 4) return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
  if (b.length !== 16) return '';
  if (isMappedIPv4(b)) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  let text = '';
  for (let i = 0; i < 16; i += 2) text += (i ? ':' : '') + HEX[b[i]!]! + HEX[b[i + 1]!]!;
  return text;
}

function clientIp(res: uWS.HttpResponse, headers: Record<string, string>, header?: string): string {
  if (header) {
    const v = headers[header.toLowerCase()];
    const last = v?.split(',').pop()?.trim();
    if (last) return last;
  }
  return formatRemoteAddress(res.getRemoteAddress());
}

/**
 * Where a body sent as pieces is gathered before it is written: one buffer, reused, rather than a new one per answer
 * (a long route's answer is 700 KB, and allocating that per answer made most of the HTTP thread's garbage
 * collection). uWS copies what end() is given before it returns, so the next answer may reuse it.
 */
let gathered = Buffer.allocUnsafeSlow(1 << 16);

function gather(pieces: Uint8Array[]): Buffer {
  let size = 0;
  for (const p of pieces) size += p.length;
  if (gathered.length < size) gathered = Buffer.allocUnsafeSlow(Math.max(size, 2 * gathered.length));
  let at = 0;
  for (const p of pieces) {
    gathered.set(p, at);
    at += p.length;
  }
  return gathered.subarray(0, size);
}

const bodyLength = (body: HttpReply['body']): number =>
  body === undefined ? 0 : Array.isArray(body) ? body.reduce((n, p) => n + p.length, 0) : Buffer.byteLength(body);

/**
 * Writes a reply; inside the uWS request handler as is, after an await inside res.cork(). `close`: uWS adds
 * `Connection: close` and ends the connection once the reply is written.
 */
function write(res: uWS.HttpResponse, method: string, reply: HttpReply, close = false): void {
  res.writeStatus(statusLine(reply.status));
  const h = reply.headers;
  for (const k in h) res.writeHeader(k, h[k]!);
  const body = reply.body;
  if (method === 'HEAD') res.endWithoutBody(bodyLength(body), close);
  else if (reply.status === 204 || reply.status === 304) res.endWithoutBody(0, close);
  else res.end(Array.isArray(body) ? gather(body) : (body ?? ''), close);
}

/** uWS.ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT (a type-only enum in the typings; the native value is 1). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** app.listen(host, port, options, cb): the native binding takes it, the typings only declare it without a host. */
function listenExclusive(
  app: uWS.TemplatedApp,
  host: string,
  port: number,
  cb: (token: uWS.us_listen_socket | false) => void,
): void {
  const wide = app as unknown as {
    listen(h: string, p: number, o: number, c: typeof cb): uWS.TemplatedApp;
  };
  wide.listen(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, cb);
}

/**
 * The only place uWebSockets.js is used. Its rules: copy everything from `req` synchronously, register onAborted
 * before any await, cork every write that happens after an await, and copy body chunks (uWS reuses the memory).
 */
export function listen(handler: RequestHandler, opts: ListenOptions): Promise<RunningServer> {
  const unavailable = nativeServerUnavailable();
  if (unavailable) return Promise.reject(new Error(unavailable));
  if (opts.tls && (!existsSync(opts.tls.cert) || !existsSync(opts.tls.key))) {
    return Promise.reject(new Error(`TLS certificate or key file not found (${opts.tls.cert}, ${opts.tls.key})`));
  }
  // One sweep timer for every in-flight request's deadline instead of a timer per request (a hot-path saving).
  const deadlines = new Set<{ at: number; fire(): void }>();
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const d of deadlines)
        if (d.at <= now) {
          deadlines.delete(d);
          d.fire();
        }
    },
    Math.max(10, Math.min(250, handler.requestTimeoutMs / 4)),
  );
  sweep.unref();
  const backlog = new Backlog();
  const app = opts.tls ? uWS.SSLApp({ cert_file_name: opts.tls.cert, key_file_name: opts.tls.key }) : uWS.App();

  // Once close() is called the server drains: requests arriving on open keep-alive connections are refused by
  // closing the connection (the client sees what it would on a closed port), the in-flight ones finish, then every
  // connection is closed. Nothing is answered after the app has flushed its metering and closed the store.
  let draining = false;
  let closedAll = false;
  const closeAllWhenIdle = () => {
    if (!draining || closedAll || deadlines.size > 0) return;
    closedAll = true;
    clearInterval(sweep);
    // A moment for the last replies to leave the socket buffers; TemplatedApp.close() is native but not in the typings.
    setTimeout(() => (app as unknown as { close(): void }).close(), 100).unref();
  };

  /**
   * One request: what the app sees (HttpRequest) and the adapter's own state, in one object with a fixed shape (the
   * address, the abort signal and the answer are per-request state too, without a closure each). A request answered
   * inside the uWS handler (no await on its way) is written at once; only one that waits registers onAborted and a
   * deadline.
   */
  class UwsRequest implements HttpRequest {
    body?: Buffer;
    readonly requestId: string;
    private addr: string | undefined = undefined;
    private gone: AbortController | undefined = undefined; // created on first use: most requests never ask
    done = false;
    /** The whole-request deadline (ms since the epoch), in `deadlines` while the request waits. */
    at = 0;

    private params: URLSearchParams | undefined = undefined;

    constructor(
      private readonly res: uWS.HttpResponse,
      readonly method: string,
      readonly path: string,
      private readonly rawQuery: string,
      readonly headers: Record<string, string>,
    ) {
      this.requestId = pickRequestId(headers['x-request-id']);
    }

    /** Parsed on first use: a hot tile reads one parameter, a refusal none. An over-long query reads as empty. */
    get query(): URLSearchParams {
      return (this.params ??= new URLSearchParams(this.rawQuery.length <= MAX_URL_BYTES ? this.rawQuery : ''));
    }

    // Only the tile family's per-IP cap reads the address, so it is fetched on first use (while the socket is open).
    get ip(): string {
      return (this.addr ??= this.done ? '' : clientIp(this.res, this.headers, opts.clientIpHeader));
    }

    get signal(): AbortSignal {
      if (!this.gone) {
        this.gone = new AbortController();
        if (this.done) this.gone.abort(); // asked after the client left or the timeout answered
      }
      return this.gone.signal;
    }

    /** Answers after an await (or from the deadline sweep). */
    send(reply: HttpReply): void {
      if (this.done) return;
      this.done = true;
      deadlines.delete(this);
      if (draining) setImmediate(closeAllWhenIdle);
      this.res.cork(() => write(this.res, this.method, reply));
    }

    /** From here on the request may outlive the uWS handler: watch for the client leaving and for the deadline. */
    wait(): void {
      this.res.onAborted(() => {
        this.done = true;
        deadlines.delete(this);
        closeAllWhenIdle();
        this.gone?.abort();
      });
      this.at = Date.now() + handler.requestTimeoutMs;
      deadlines.add(this);
    }

    fire(): void {
      this.send(handler.fail(this, 'REQUEST_TIMEOUT'));
      this.gone?.abort(); // queued work for this request is dropped, not done for nobody
    }

    /**
     * Refuses the request at once when admission would (never queued behind a backlog), else runs it now, or after
     * the requests queued before it when the event loop has a backlog.
     */
    start(): void {
      const refusal = handler.shed?.(this);
      if (refusal) return this.at === 0 ? this.writeNow(refusal) : this.send(refusal);
      if (!backlog.busy() || handler.urgent?.(this)) return this.dispatch();
      if (this.at === 0) this.wait();
      backlog.defer(() => {
        if (!this.done) this.dispatch();
      });
    }

    dispatch(): void {
      let out: HttpReply | Promise<HttpReply>;
      try {
        out = handler.handle(this);
      } catch (e) {
        out = handler.fail(this, 'INTERNAL_ERROR', e);
      }
      if (out instanceof Promise) {
        if (this.at === 0) this.wait();
        out.then(
          (reply) => this.send(reply),
          (e: unknown) => this.send(handler.fail(this, 'INTERNAL_ERROR', e)),
        );
      } else if (this.at === 0) this.writeNow(out);
      else this.send(out);
    }

    /** A refusal the adapter decides on its own, inside the uWS handler. */
    refuse(code: TransportFailure): void {
      this.writeNow(handler.fail(this, code), closesConnection(code));
    }

    /** Still inside the uWS handler: uWS corks the write itself. */
    private writeNow(reply: HttpReply, close = false): void {
      this.done = true;
      // uWS does not count endWithoutBody(n > 0) as an answer inside its handler and would abort the process.
      if (this.method === 'HEAD') this.res.onAborted(noop);
      write(this.res, this.method, reply, close);
    }
  }

  app.any('/*', (res, r) => {
    if (draining) return void res.close();
    const headers: Record<string, string> = {};
    let headerBytes = 0;
    let fields = 0;
    r.forEach((k, v) => {
      headerBytes += k.length + v.length + 4; // "name: value\r\n"
      fields++;
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    });
    const rawQuery = r.getQuery() ?? '';
    const method = r.getMethod().toUpperCase();
    const path = r.getUrl();
    const req = new UwsRequest(res, method, path, rawQuery, headers);

    // Limits the app applies itself; uWS closes the connection on requests past its own (docs/security.md, "Request size limits").
    if (path.length + rawQuery.length + 1 > MAX_URL_BYTES) return req.refuse('URI_TOO_LONG');
    if (headerBytes > MAX_HEADER_BYTES || fields > MAX_HEADER_FIELDS) return req.refuse('HEADERS_TOO_LARGE');
    if (!BODY_METHODS.has(method)) return req.start();
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > handler.bodyLimitBytes) return req.refuse('PAYLOAD_TOO_LARGE');
    // The whole-request timeout covers reading the body too, so a slow-loris upload cannot hold a slot forever.
    req.wait();
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (req.done) return;
      size += chunk.byteLength;
      if (size > handler.bodyLimitBytes) return req.send(handler.fail(req, 'PAYLOAD_TOO_LARGE'));
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        req.body = Buffer.concat(chunks);
        req.start();
      }
    });
  });

  return new Promise((resolve, reject) => {
    // Exclusive: without it uWS sets SO_REUSEPORT and a second server on the same port would share the socket.
    listenExclusive(app, opts.host, opts.port, (token) => {
      if (!token)
        return reject(
          new Error(
            `cannot listen on ${opts.host}:${opts.port}: the port is in use by another process or the address is not available`,
          ),
        );
      const port = uWS.us_socket_local_port(token);
      const scheme = opts.tls ? 'https' : 'http';
      const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
      resolve({
        port,
        url: `${scheme}://${host}:${port}`,
        close: () => {
          if (draining) return;
          draining = true;
          uWS.us_listen_socket_close(token);
          closeAllWhenIdle();
        },
      });
    });
  });
}
