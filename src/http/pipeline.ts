import { AppError, isAppError } from '../core/errors.js';
import type { AccessLine, Logger } from '../core/log.js';
import type { Authenticator, Credentials } from '../auth/authenticator.js';
import type { Caller } from '../auth/caller.js';
import type { Meter } from '../limits/meter.js';
import type { LimitDecision, SlidingWindowLimiter } from '../limits/sliding-window.js';
import type { RateLimiter, SharedQuota } from '../limits/ports.js';
import type { Bucket } from '../store/usage-repo.js';
import type { Clock } from '../core/clock.js';
import { bare, bareErrorReply, errorReply } from './envelope.js';
import { decorate, isMapsPath, preflightHeaders } from './middleware/headers.js';
import { readCredentials } from './middleware/credentials.js';
import { setRateLimitHeaders } from './middleware/limits.js';
import type { Route, RouteContext, Router } from './router.js';
import type { HttpReply, HttpRequest, RequestHandler, TransportFailure } from './types.js';
import type { RequestMetrics } from '../ops/request-metrics.js';

export interface PipelineDeps {
  router: Router;
  auth: Authenticator;
  meter: Meter;
  /** In process on one node; shared (Redis) in a cluster, where its answer is a promise. */
  keyLimiter: RateLimiter;
  /** Cluster mode with Redis: the daily quota's admission decision, exact across nodes. Absent: the meter's count. */
  dailyQuota?: SharedQuota;
  ipLimiter: SlidingWindowLimiter;
  clock: Clock;
  log: Logger;
  engineEnabled: boolean;
  corsOrigins: string[];
  tileIpPerMinute: number;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  /** Per-route counts, latency and answering tier for /metrics; also counts requests in flight for shutdown. */
  metrics?: RequestMetrics;
  /** config log.requests: false writes the access line only for 5xx answers (errors are logged where they occur). */
  logRequests?: boolean;
}

/** Codes a binary endpoint still answers with the JSON envelope: the auth and limit layers, not its parameters. */
const ENVELOPE_ON_BINARY = new Set([
  'MISSING_TOKEN',
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'MAPS_AUTH_UNAVAILABLE',
  'AUTH_REQUIRED',
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'TOKEN_NOT_KEY_BOUND',
  'API_KEY_REVOKED',
  'SESSION_SUPERSEDED',
  'RATE_LIMIT_EXCEEDED',
  'MAPS_QUOTA_EXCEEDED',
  'MAPS_UNAVAILABLE',
  'INSUFFICIENT_ROLE',
  'VECTOR_TILES_NOT_SUPPORTED',
  'REQUEST_TIMEOUT',
]);

/** One request on its way through the pipeline: what the reply's finishing needs, in one object. */
class Turn {
  readonly started = performance.now();
  route: Route | undefined = undefined;
  caller: Caller | undefined = undefined;
  ctx: RouteContext | undefined = undefined;
  /** The Allow header of a 405. */
  allow: string | undefined = undefined;
  /** The last rate-limit decision taken (its RateLimit-* headers). */
  limit: LimitDecision | undefined = undefined;

  constructor(readonly req: HttpRequest) {}
}

/**
 * The request pipeline, in order: route -> preflight -> engine switch -> per-IP tile cap -> auth -> per-key limit
 * -> daily quota -> handler -> metering; then the headers every response carries.
 */
export class Pipeline implements RequestHandler {
  readonly bodyLimitBytes: number;
  readonly requestTimeoutMs: number;
  private readonly logRequests: boolean;
  /** Units of a shared daily quota taken by requests in flight, given back unless the request was a miss. */
  private readonly taken = new WeakMap<Caller, { day: string; bucket: Bucket }>();

  constructor(private readonly d: PipelineDeps) {
    this.bodyLimitBytes = d.bodyLimitBytes;
    this.requestTimeoutMs = d.requestTimeoutMs;
    this.logRequests = d.logRequests ?? true;
  }

  /** A check that throws is logged and the request runs in its turn, where its handler meets the fault in turn. */
  urgent(req: HttpRequest): boolean {
    try {
      const m = this.d.router.match(req.method, req.path);
      return m !== undefined && 'route' in m && m.route.urgent?.(req, m.params) === true;
    } catch (e) {
      this.d.log.error('urgency check failed', { request_id: req.requestId, error: (e as Error)?.stack ?? String(e) });
      return false;
    }
  }

  /**
   * The refusal of a request admission would refuse now, decided before routing it further, authenticating it or
   * queuing it behind a backlog: a bare 503 with Retry-After, logged and counted like any answer. Undefined for a
   * request that goes its normal way. Asked by the adapter for every request; a lookup for most of them.
   */
  shed(req: HttpRequest): HttpReply | undefined {
    if (!this.d.engineEnabled) return undefined;
    const route = this.d.router.exact(req.method, req.path);
    if (!route?.shed) return undefined;
    let refusal: AppError | undefined;
    try {
      refusal = route.shed(req);
    } catch (e) {
      this.d.log.error('shed check failed', { request_id: req.requestId, error: stackOf(e) });
      return undefined;
    }
    if (!refusal) return undefined;
    if (this.d.metrics) this.d.metrics.inflight++;
    const t = new Turn(req);
    t.route = route;
    return this.finish(t, this.renderError(refusal, req, route));
  }

  /**
   * Synchronous from end to end when nothing on the way waits (in-process limits and a handler that answers at once),
   * so the adapter writes the reply without a promise or a microtask; a promise otherwise.
   */
  handle(req: HttpRequest): HttpReply | Promise<HttpReply> {
    if (this.d.metrics) this.d.metrics.inflight++;
    const t = new Turn(req);
    let reply: HttpReply | Promise<HttpReply>;
    try {
      reply = this.run(t);
    } catch (e) {
      reply = this.renderError(e, req, t.route);
    }
    if (reply instanceof Promise)
      return reply.then(
        (r) => this.finish(t, r),
        (e: unknown) => this.finish(t, this.renderError(e, req, t.route)),
      );
    return this.finish(t, reply);
  }

  private run(t: Turn): HttpReply | Promise<HttpReply> {
    const req = t.req;
    const m = this.d.router.match(req.method, req.path);
    if (req.method === 'OPTIONS' && isMapsPath(req.path) && m)
      return bare(204, preflightHeaders('allowed' in m ? m.allowed : [m.route.method]));
    if (!m) throw new AppError('NOT_FOUND');
    if ('allowed' in m) {
      t.allow = m.allowed.join(', ');
      throw new AppError('METHOD_NOT_ALLOWED');
    }
    const route = (t.route = m.route);
    const admitted = this.admit(route, req, t);
    // Only a shared limiter, or a key another node created a moment ago, is awaited.
    if (admitted instanceof Promise) return admitted.then((caller) => this.invoke(t, route, m.params, caller));
    return this.invoke(t, route, m.params, admitted);
  }

  private invoke(
    t: Turn,
    route: Route,
    params: Record<string, string>,
    caller: Caller | undefined,
  ): HttpReply | Promise<HttpReply> {
    t.caller = caller;
    const ctx: RouteContext = (t.ctx = { req: t.req, params, caller, miss: false });
    return route.handler(ctx);
  }

  private finish(t: Turn, reply: HttpReply): HttpReply {
    const { req, route, caller, ctx } = t;
    const h = reply.headers;
    if (t.allow !== undefined) h['Allow'] = t.allow;
    if (t.limit) setRateLimitHeaders(h, t.limit);
    if (this.d.dailyQuota && caller && !ctx?.miss) this.giveBack(caller);
    if (caller?.keyId || caller?.kind === 'jwt') this.meter(route!, caller, ctx?.miss ?? false);
    const ms = performance.now() - t.started;
    // The answering tier: X-Tile-Source on the tile family, cache hit or miss on JSON answers that count misses.
    const source =
      h['X-Tile-Source'] ?? (route?.bucket && ctx && reply.status < 300 ? (ctx.miss ? 'miss' : 'hit') : undefined);
    // log.requests: false drops the access line, except for a 5xx, which keeps it.
    if (this.logRequests || reply.status >= 500) {
      const line: AccessLine = {
        request_id: req.requestId,
        method: req.method,
        route: route?.pattern ?? req.path.slice(0, 200),
        status: reply.status,
        key_id: caller?.id,
        duration_ms: Math.round(ms * 100) / 100,
        source,
      };
      if (this.d.log.access) this.d.log.access(line);
      else this.d.log.info('request', { ...line });
    }
    if (this.d.metrics) {
      this.d.metrics.record(route?.pattern, reply.status, ms / 1000, source);
      this.d.metrics.inflight--;
    }
    return decorate(reply, req, this.d.corsOrigins);
  }

  fail(req: HttpRequest, code: TransportFailure, error?: unknown): HttpReply {
    const fields = { request_id: req.requestId, code, path: req.path.slice(0, 200) };
    if (error === undefined) this.d.log.warn('request failed in transport', fields);
    else this.d.log.error('request failed in transport', { ...fields, error: stackOf(error) });
    return decorate(errorReply(new AppError(code), req.requestId), req, this.d.corsOrigins);
  }

  /** Everything that decides whether a request may reach its handler. */
  private admit(route: Route, req: HttpRequest, t: Turn): Caller | undefined | Promise<Caller | undefined> {
    const now = this.d.clock.nowMs();
    if (isMapsPath(req.path) && !this.d.engineEnabled) throw new AppError('MAPS_UNAVAILABLE');
    if (route.tileFamily) this.rateHere(this.d.ipLimiter, `ip:${req.ip}`, this.d.tileIpPerMinute, now, t);
    const creds = readCredentials(req);
    const unknownKey = route.surface === 'none' ? undefined : this.d.auth.prepare(creds);
    if (unknownKey) return unknownKey.then(() => this.limitAndQuota(route, creds, now, t));
    return this.limitAndQuota(route, creds, now, t);
  }

  private limitAndQuota(
    route: Route,
    creds: Credentials,
    now: number,
    t: Turn,
  ): Caller | undefined | Promise<Caller | undefined> {
    const caller = this.d.auth.authenticate(route.surface, creds);
    if (!caller) return undefined;
    if (!route.tileFamily) {
      const pending = this.rate(this.d.keyLimiter, caller.id, caller.perMinute, now, t);
      if (pending && this.d.dailyQuota) return this.rateAndSharedQuota(pending, route, caller, now);
      if (pending) return pending.then(() => this.quota(route, caller, now));
    }
    if (this.d.dailyQuota) return this.sharedQuota(this.d.dailyQuota, route, caller, now);
    return this.quota(route, caller, now);
  }

  private quota(route: Route, caller: Caller, now: number): Caller {
    if (
      route.bucket &&
      route.bucket !== 'tile_family' &&
      this.d.meter.misses(caller.id, route.bucket, now) >= caller.daily
    ) {
      throw new AppError('MAPS_QUOTA_EXCEEDED');
    }
    return caller;
  }

  /**
   * Both shared checks at once: their Redis calls leave in one write, so the quota adds no round trip of its own.
   * A request the per-minute limit refuses gives back the quota unit it took, and is refused for the rate.
   */
  private rateAndSharedQuota(pending: Promise<void>, route: Route, caller: Caller, now: number): Promise<Caller> {
    const quota = this.sharedQuota(this.d.dailyQuota!, route, caller, now);
    return Promise.allSettled([pending, quota]).then(([rate, q]) => {
      if (rate.status === 'rejected') {
        this.giveBack(caller);
        throw rate.reason;
      }
      if (q.status === 'rejected') throw q.reason;
      return caller;
    });
  }

  /**
   * The daily quota across nodes: one unit taken atomically in Redis (exact), given back after the handler unless
   * the request was a miss. When Redis cannot decide, the quota fails open to the meter's count: what PostgreSQL and
   * this node have recorded, as exact as one flush interval allows; a Redis fault itself never refuses a request.
   */
  private async sharedQuota(shared: SharedQuota, route: Route, caller: Caller, now: number): Promise<Caller> {
    const bucket = route.bucket;
    if (!bucket || bucket === 'tile_family') return caller;
    const used = this.d.meter.misses(caller.id, bucket, now);
    const day = this.d.meter.day(now);
    const taken = await shared.take(caller.id, day, bucket, caller.daily, used);
    if (taken === true) this.taken.set(caller, { day, bucket });
    else if (taken === false || used >= caller.daily) throw new AppError('MAPS_QUOTA_EXCEEDED');
    return caller;
  }

  private giveBack(caller: Caller): void {
    const held = this.taken.get(caller);
    if (!held) return;
    this.taken.delete(caller);
    this.d.dailyQuota?.give(caller.id, held.day, held.bucket);
  }

  /** Rate limiting fails open: a limiter fault lets the request through rather than failing it. */
  private rate(limiter: RateLimiter, id: string, limit: number, now: number, t: Turn): Promise<void> | undefined {
    let d;
    try {
      d = limiter.hit(id, limit, now);
    } catch (e) {
      this.d.log.warn('rate limiter fault; failing open', { error: (e as Error).message });
      return undefined;
    }
    if (!(d instanceof Promise)) return this.decide(d, t);
    return d.then(
      (v) => v && this.decide(v, t), // undefined: the shared limiter is down, fail open
      (e: unknown) => this.d.log.warn('rate limiter fault; failing open', { error: (e as Error).message }),
    );
  }

  /** The per-IP tile cap always counts in process. */
  private rateHere(limiter: SlidingWindowLimiter, id: string, limit: number, now: number, t: Turn): void {
    let d;
    try {
      d = limiter.hit(id, limit, now);
    } catch (e) {
      this.d.log.warn('rate limiter fault; failing open', { error: (e as Error).message });
      return;
    }
    this.decide(d, t);
  }

  private decide(d: LimitDecision, t: Turn): undefined {
    t.limit = d; // its RateLimit-* headers go on the reply, a refusal's included
    if (!d.allowed) throw new AppError('RATE_LIMIT_EXCEEDED', undefined, { retryAfter: d.retryAfterS });
  }

  private meter(route: Route, caller: Caller, miss: boolean): void {
    try {
      this.d.meter.record(
        caller.id,
        route.bucket ?? (route.tileFamily ? 'tile_family' : 'gather'),
        miss,
        this.d.clock.nowMs(),
      );
    } catch (e) {
      this.d.log.warn('metering fault; failing open', { error: (e as Error).message });
    }
  }

  private renderError(e: unknown, req: HttpRequest, route: Route | undefined): HttpReply {
    if (!isAppError(e)) {
      this.d.log.error('unhandled error', { request_id: req.requestId, error: (e as Error)?.stack ?? String(e) });
      e = new AppError('INTERNAL_ERROR');
    }
    const err = e as AppError;
    if (err.status >= 500)
      this.d.log.warn('server error', { request_id: req.requestId, code: err.code, error: err.message });
    return route?.binary && !ENVELOPE_ON_BINARY.has(err.code) ? bareErrorReply(err) : errorReply(err, req.requestId);
  }
}

/** An error as a log field: its stack (message included), or the thrown value as text. */
const stackOf = (e: unknown): string => (e as Error)?.stack ?? String(e);
