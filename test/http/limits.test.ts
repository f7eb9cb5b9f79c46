import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { startServer, type TestServer } from '../helpers/app.js';

/** One parsed HTTP/1.1 response. */
interface Answer {
  statusLine: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A raw client connection: writes bytes as given, reads responses (Content-Length framed) and records how the
 * connection ended: `ended` when the server closed it in order (FIN), `error` when it was reset or failed.
 */
class RawConnection {
  private readonly sock: Socket;
  private buf = '';
  private wake: (() => void) | undefined;
  ended = false;
  error: string | undefined;
  readonly closed: Promise<void>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.sock = connect(Number(port), hostname);
    this.sock.setEncoding('latin1');
    this.sock.on('data', (d: string) => {
      this.buf += d;
      this.wake?.();
    });
    this.sock.on('end', () => {
      this.ended = true;
      this.wake?.();
    });
    // Recorded, then asserted on by each test: a reset is what these limits must never produce.
    this.sock.on('error', (e: NodeJS.ErrnoException) => {
      this.error = e.code ?? e.message;
      this.wake?.();
    });
    this.closed = new Promise((resolve) => this.sock.on('close', () => resolve()));
  }

  send(raw: string): void {
    this.sock.write(raw, 'latin1');
  }

  /** The next complete response; rejects when the connection ends first. */
  async answer(): Promise<Answer> {
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine, ...lines] = this.buf.slice(0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines) {
          const at = l.indexOf(':');
          headers[l.slice(0, at).trim().toLowerCase()] = l.slice(at + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buf.length >= end + 4 + length) {
          const body = this.buf.slice(end + 4, end + 4 + length);
          this.buf = this.buf.slice(end + 4 + length);
          return { statusLine: statusLine!, headers, body };
        }
      }
      if (this.ended || this.error) {
        throw new Error(`connection ended without a complete response (${this.error ?? 'closed'}): ${this.buf}`);
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  destroy(): void {
    this.sock.destroy();
  }
}

/** A keep-alive request (no `Connection: close`): the connection stays open unless the server ends it. */
const request = (target: string, headers: string[] = []) =>
  `GET ${target} HTTP/1.1\r\nHost: x\r\n${headers.map((h) => h + '\r\n').join('')}\r\n`;

// Sizes under 64 KiB reach the server in one read on loopback, so the HTTP layer parses them whole and the app's own
// limits (8 KiB of URL, 8 KiB of header fields) answer; see src/http/uws/refusals.ts for what lies beyond.
describe('an over-long request head gets an answer, then the connection closes', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
  });
  afterAll(() => s?.close());

  it('answers 414 URI_TOO_LONG to a 60 kB URL and ends the connection in order', async () => {
    const c = new RawConnection(s.url);
    try {
      c.send(request(`/maps/v1/staticmap?path=${'31.9,35.9,'.repeat(6000)}`));
      const a = await c.answer();
      expect(a.statusLine).toBe('HTTP/1.1 414 URI Too Long');
      expect(a.headers['connection']).toBe('close');
      expect(JSON.parse(a.body)).toMatchObject({ status: 'error', error: { code: 'URI_TOO_LONG' } });
      await c.closed;
      expect(c.ended).toBe(true);
      expect(c.error).toBeUndefined();
    } finally {
      c.destroy();
    }
  });

  it('answers 431 HEADERS_TOO_LARGE to a 60 kB header field and ends the connection in order', async () => {
    const c = new RawConnection(s.url);
    try {
      c.send(request('/livez', [`X-Big: ${'b'.repeat(60_000)}`]));
      const a = await c.answer();
      expect(a.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(a.headers['connection']).toBe('close');
      expect(JSON.parse(a.body)).toMatchObject({ status: 'error', error: { code: 'HEADERS_TOO_LARGE' } });
      await c.closed;
      expect(c.ended).toBe(true);
      expect(c.error).toBeUndefined();
    } finally {
      c.destroy();
    }
  });

  it('keeps a connection open after a request within the limits, and ends it after a refused one', async () => {
    const c = new RawConnection(s.url);
    try {
      c.send(request('/livez'));
      const ok = await c.answer();
      expect(ok.statusLine).toBe('HTTP/1.1 200 OK');
      expect(ok.headers['connection']).toBeUndefined();
      c.send(request(`/livez?pad=${'a'.repeat(9000)}`));
      const refused = await c.answer();
      expect(refused.statusLine).toBe('HTTP/1.1 414 URI Too Long');
      expect(refused.headers['connection']).toBe('close');
      await c.closed;
      expect(c.ended).toBe(true);
      expect(c.error).toBeUndefined();
    } finally {
      c.destroy();
    }
  });

  it('does not end the connection after 413: the refused body may still be arriving', async () => {
    const c = new RawConnection(s.url);
    try {
      c.send(
        `POST /maps/v1/directions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${16 * 1024 * 1024}\r\n\r\n`,
      );
      const a = await c.answer();
      expect(a.statusLine).toBe('HTTP/1.1 413 Payload Too Large');
      expect(a.headers['connection']).toBeUndefined();
    } finally {
      c.destroy();
    }
  });
});
