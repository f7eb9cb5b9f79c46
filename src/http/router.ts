import type { Caller } from '../auth/caller.js';
import type { AppError } from '../core/errors.js';
import type { Surface } from '../auth/authenticator.js';
import type { Bucket } from '../store/usage-repo.js';
import type { HttpReply, HttpRequest } from './types.js';

export interface RouteContext {
  req: HttpRequest;
  params: Record<string, string>;
  caller?: Caller;
  /** Set by a handler when the answer needed a live gather: daily quotas count misses only. */
  miss: boolean;
}

export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  /** Segments; `:name` captures one, a final `*name` captures the rest (slashes included). */
  pattern: string;
  surface: Surface;
  /** Binary endpoints answer parameter and upstream errors with a bare status. */
  binary?: boolean;
  /** Tile family: rate-capped per IP before auth, metered to the key, no per-key limit. */
  tileFamily?: boolean;
  /** Daily-quota bucket the route's misses count against. */
  bucket?: Bucket;
  handler(ctx: RouteContext): Promise<HttpReply> | HttpReply;
  /** Answers at once from memory (no engine work, no store): served ahead of a backlog (src/http/uws/backlog.ts). */
  urgent?(req: HttpRequest, params: Record<string, string>): boolean;
  /**
   * The refusal this request would meet at admission now (a full queue, a predicted wait past the budget), asked
   * before any other work: a burst's refusals cost neither auth nor the backlog. Parameterless routes only.
   */
  shed?(req: HttpRequest): AppError | undefined;
}

export type Match = { route: Route; params: Record<string, string> } | { allowed: string[] } | undefined;

interface Compiled {
  route: Route;
  parts: string[];
  /** Per part: the parameter name it captures, or undefined for a literal segment. */
  names: (string | undefined)[];
  rest?: string;
}

function compile(route: Route): Compiled {
  const all = route.pattern.split('/').slice(1);
  const last = all[all.length - 1];
  const parts = last?.startsWith('*') ? all.slice(0, -1) : all;
  const names = parts.map((p) => (p.startsWith(':') ? p.slice(1) : undefined));
  return last?.startsWith('*') ? { route, parts, names, rest: last.slice(1) } : { route, parts, names };
}

function decode(seg: string): string | undefined {
  try {
    return decodeURIComponent(seg);
  } catch (e) {
    if (e instanceof URIError) return undefined; // a malformed escape: no route matches it
    throw e;
  }
}

/** A small segment router: the route table is short and matching is a handful of string compares. */
export class Router {
  private readonly routes: Compiled[] = [];
  /** Routes without parameters, by path: found with one lookup (see exact()). */
  private readonly literal = new Map<string, Route[]>();

  add(...routes: Route[]): void {
    for (const r of routes) {
      this.routes.push(compile(r));
      if (!r.pattern.includes(':') && !r.pattern.includes('*'))
        this.literal.set(r.pattern, [...(this.literal.get(r.pattern) ?? []), r]);
    }
  }

  /** The registered routes, in matching order: a copy, for listing and checking them. */
  list(): ReadonlyArray<Readonly<Route>> {
    return this.routes.map((c) => c.route);
  }

  /** The parameterless route for this method and path, if any: a map lookup, for checks made before routing. */
  exact(method: string, path: string): Route | undefined {
    const rs = this.literal.get(path);
    return rs?.find((r) => r.method === method || (method === 'HEAD' && r.method === 'GET'));
  }

  match(method: string, path: string): Match {
    const segs = path.split('/').slice(1);
    const allowed: string[] = [];
    for (const c of this.routes) {
      const params = this.bind(c, segs);
      if (!params) continue;
      if (c.route.method === method || (method === 'HEAD' && c.route.method === 'GET'))
        return { route: c.route, params };
      allowed.push(c.route.method);
    }
    return allowed.length ? { allowed } : undefined;
  }

  private bind(c: Compiled, segs: string[]): Record<string, string> | undefined {
    if (c.rest === undefined ? segs.length !== c.parts.length : segs.length <= c.parts.length) return undefined;
    // Literal segments first: most routes are ruled out without decoding anything or allocating.
    for (let i = 0; i < c.parts.length; i++) if (c.names[i] === undefined && c.parts[i] !== segs[i]) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < c.parts.length; i++) {
      const name = c.names[i];
      if (name === undefined) continue;
      const v = decode(segs[i]!);
      if (v === undefined) return undefined;
      params[name] = v;
    }
    if (c.rest !== undefined) {
      // Decoded per segment and re-joined, so an encoded slash (%2F) stays visible as '/' to the handler.
      const rest = segs.slice(c.parts.length).map(decode);
      if (rest.some((r) => r === undefined)) return undefined;
      params[c.rest] = rest.join('/');
    }
    return params;
  }
}
