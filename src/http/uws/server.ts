import uWS from 'uWebSockets.js';
import { STATUS_CODES } from 'node:http';
import { existsSync } from 'node:fs';
import { pickRequestId } from '../middleware/request-id.js';
import { nativeServerUnavailable } from './native.js';
import type { HttpReply, HttpRequest, RequestHandler } from '../types.js';

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
export const MAX_URL_BYTES = 8192;
/** Header fields (names and values) past this many bytes, or past this many fields, get 431. */
export const MAX_HEADER_BYTES = 8192;
export const MAX_HEADER_FIELDS = 40;
const statusLine = (s: number) => `${s} ${STATUS_CODES[s] ?? 'Status'}`;

function clientIp(res: uWS.HttpResponse, headers: Record<string, string>, header?: string): string {
  if (header) {
    const v = headers[header.toLowerCase()];
    const last = v?.split(',').pop()?.trim();
    if (last) return last;
  }
  const ip = Buffer.from(res.getRemoteAddressAsText()).toString();
  return ip.startsWith('0000:0000:0000:0000:0000:ffff:') ? ip.slice(30) : ip.replace(/^::ffff:/, '');
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
  const deadlines = new Set<{ at: number; fire: () => void }>();
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
    let ip: string | undefined;
    let done = false;
    let gone: AbortController | undefined; // created on first use: most requests never ask
    const hangUp = () => gone?.abort();
    const req: HttpRequest = {
      method,
      path: r.getUrl(),
      query: new URLSearchParams(rawQuery.length <= MAX_URL_BYTES ? rawQuery : ''),
      headers,
      // Only the tile family's per-IP cap reads the address, so it is fetched on first use (while the socket is open).
      get ip() {
        return (ip ??= done ? '' : clientIp(res, headers, opts.clientIpHeader));
      },
      requestId: pickRequestId(headers['x-request-id']),
      get signal() {
        if (!gone) {
          gone = new AbortController();
          if (done) gone.abort(); // asked after the client left or the timeout answered
        }
        return gone.signal;
      },
    };
    const send = (reply: HttpReply) => {
      if (done) return;
      done = true;
      deadlines.delete(timer);
      setImmediate(closeAllWhenIdle);
      res.cork(() => {
        res.writeStatus(statusLine(reply.status));
        for (const [k, v] of Object.entries(reply.headers)) res.writeHeader(k, v);
        if (method === 'HEAD') res.endWithoutBody(reply.body ? Buffer.byteLength(reply.body) : 0);
        else if (reply.status === 204 || reply.status === 304) res.endWithoutBody(0);
        else res.end(reply.body ?? '');
      });
    };
    res.onAborted(() => {
      done = true;
      deadlines.delete(timer);
      closeAllWhenIdle();
      hangUp();
    });
    // The whole-request timeout covers reading the body too, so a slow-loris upload cannot hold a slot forever.
    const timer = {
      at: Date.now() + handler.requestTimeoutMs,
      fire: () => {
        send(handler.fail(req, 'REQUEST_TIMEOUT'));
        hangUp(); // queued work for this request is dropped, not done for nobody
      },
    };
    deadlines.add(timer);
    const dispatch = () => handler.handle(req).then(send, () => send(handler.fail(req, 'INTERNAL_ERROR')));

    // Limits the app applies itself; uWS closes the connection on requests past its own (see the README).
    if (req.path.length + rawQuery.length + 1 > MAX_URL_BYTES) return send(handler.fail(req, 'URI_TOO_LONG'));
    if (headerBytes > MAX_HEADER_BYTES || fields > MAX_HEADER_FIELDS) {
      return send(handler.fail(req, 'HEADERS_TOO_LARGE'));
    }
    if (!BODY_METHODS.has(method)) return void dispatch();
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > handler.bodyLimitBytes) return send(handler.fail(req, 'PAYLOAD_TOO_LARGE'));
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (done) return;
      size += chunk.byteLength;
      if (size > handler.bodyLimitBytes) return send(handler.fail(req, 'PAYLOAD_TOO_LARGE'));
      chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        req.body = Buffer.concat(chunks);
        void dispatch();
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
