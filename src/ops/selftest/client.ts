/** A minimal HTTP client for the self-test: every check talks to the real server over the network. */
export interface Reply {
  status: number;
  headers: Headers;
  body: Buffer;
  ms: number;
  json<T = unknown>(): T;
  code(): string;
}

export class Client {
  constructor(
    readonly base: string,
    readonly key: string,
    private readonly timeoutMs = 20_000,
  ) {}

  async request(
    method: string,
    path: string,
    o: { key?: string | null; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Reply> {
    // One connection per request: keep-alive sockets to a server the self-test is about to close would hold the CLI open.
    const headers: Record<string, string> = { Connection: 'close', ...o.headers };
    const key = o.key === undefined ? this.key : o.key;
    if (key) headers['X-API-Key'] = key;
    if (o.body !== undefined) headers['Content-Type'] = 'application/json';
    const t0 = performance.now();
    const res = await fetch(this.base + path, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const ms = performance.now() - t0;
    return {
      status: res.status,
      headers: res.headers,
      body,
      ms,
      json: <T>() => JSON.parse(body.toString('utf8')) as T,
      code() {
        try {
          const j = JSON.parse(body.toString('utf8')) as { error?: { code?: string }; code?: string };
          return j.error?.code ?? j.code ?? '';
        } catch (e) {
          if (e instanceof SyntaxError) return ''; // not a JSON body: no code
          throw e;
        }
      },
    };
  }

  get(path: string, o?: { key?: string | null; headers?: Record<string, string> }): Promise<Reply> {
    return this.request('GET', path, o);
  }

  post(path: string, body: unknown, o?: { key?: string | null }): Promise<Reply> {
    return this.request('POST', path, { ...o, body });
  }
}

/** A failed expectation: the message is what the operator reads next to the red cross. */
class CheckFailed extends Error {
  override name = 'CheckFailed';
}

export function expect(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailed(message);
}

export function expectStatus(r: Reply, status: number, what: string, code?: string): void {
  const got = r.code();
  if (r.status !== status || (code && got !== code)) {
    throw new CheckFailed(
      `${what}: expected ${status}${code ? ` ${code}` : ''}, got ${r.status}${got ? ` ${got}` : ''}`,
    );
  }
}

/** Width and height from a PNG's IHDR, or undefined when the bytes are not a PNG. */
export function pngSize(b: Buffer): { w: number; h: number } | undefined {
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
}
