/** The HTTP shapes the rest of the app sees; nothing here knows about uWebSockets.js. */
export interface HttpRequest {
  method: string; // upper case
  path: string; // raw, not percent-decoded
  query: URLSearchParams;
  headers: Record<string, string>; // lower-case names
  ip: string;
  requestId: string;
  body?: Buffer;
  /** Fires when nobody waits for the answer any more (client went away, or the whole-request timeout answered). */
  signal?: AbortSignal;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string>;
  /** The body; an array is its pieces, sent one after another (an answer that embeds bytes it did not copy). */
  body?: Buffer | string | Uint8Array[];
}

export type TransportFailure =
  'PAYLOAD_TOO_LARGE' | 'URI_TOO_LONG' | 'HEADERS_TOO_LARGE' | 'REQUEST_TIMEOUT' | 'INTERNAL_ERROR';

/** What a server adapter needs from the app. */
export interface RequestHandler {
  /** A reply at once when nothing on the way waits (the adapter then writes it without an await), else a promise. */
  handle(req: HttpRequest): HttpReply | Promise<HttpReply>;
  /**
   * True when the request answers at once from memory (health, a tile in the hot tier): the adapter then runs it
   * ahead of a backlog of requests that need real work. Asked only while there is a backlog.
   */
  urgent?(req: HttpRequest): boolean;
  /** The refusal of a request admission would refuse now, answered before any other work; undefined otherwise. */
  shed?(req: HttpRequest): HttpReply | undefined;
  /**
   * Replies for failures the adapter detects itself (oversized URL, headers or body, whole-request timeout), and
   * its last-resort 500 for an error the handler let escape (`error`, logged with its stack).
   */
  fail(req: HttpRequest, code: TransportFailure, error?: unknown): HttpReply;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
}
