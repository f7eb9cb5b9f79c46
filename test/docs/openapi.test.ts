import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJwt } from '../../src/auth/jwt.js';
import { ERRORS } from '../../src/core/errors.js';
import type { PipelineDeps } from '../../src/http/pipeline.js';
import { Router } from '../../src/http/router.js';
import { OPENAPI_FILE, register } from '../../src/http/routes/openapi.js';
import type { HttpReply } from '../../src/http/types.js';
import type { Services } from '../../src/services.js';
import { startPlacesServer, type TestServer } from '../helpers/app.js';

/**
 * docs/openapi.yaml against the code: its operations are the router's routes, it is a valid OpenAPI 3.1 document,
 * its error codes have the statuses of the error catalogue, and every request example it gives is sent to a real
 * server on a fresh data directory (the embedded gazetteer, the Natural Earth basemap, no import), whose answers
 * must have the documented statuses, headers and bodies.
 */

const doc: any = parse(readFileSync(OPENAPI_FILE, 'utf8'));
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];
const JWT_SECRET = 'openapi-test-secret-at-least-32-bytes!';

interface Operation {
  method: string;
  path: string;
  op: any;
  params: any[];
}

/** Follows a local `$ref` (`#/components/...`) to what it names; anything else is returned as it is. */
function deref(v: any): any {
  let out = v;
  for (let hops = 0; out?.$ref !== undefined; hops++) {
    if (hops > 8 || !String(out.$ref).startsWith('#/')) throw new Error(`unresolvable $ref ${out.$ref}`);
    out = String(out.$ref)
      .slice(2)
      .split('/')
      .reduce((o: any, k) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc);
    if (out === undefined) throw new Error(`dangling $ref ${v.$ref}`);
  }
  return out;
}

const operations: Operation[] = Object.entries(doc.paths).flatMap(([path, item]: [string, any]) =>
  METHODS.filter((m) => item[m]).map((m) => ({
    method: m.toUpperCase(),
    path,
    op: item[m],
    params: [...(item.parameters ?? []), ...(item[m].parameters ?? [])].map(deref),
  })),
);

const responsesOf = (o: Operation): [number, any][] =>
  Object.entries(o.op.responses).map(([status, r]) => [Number(status), deref(r)]);

/** Names of the request examples of an operation: its parameters' and its JSON body's. */
function exampleNames(o: Operation): string[] {
  const names = new Set<string>();
  for (const p of o.params) for (const n of Object.keys(p.examples ?? {})) names.add(n);
  const body = o.op.requestBody && deref(o.op.requestBody).content?.['application/json'];
  for (const n of Object.keys(body?.examples ?? {})) names.add(n);
  return [...names];
}

/** The responses that claim a request example by name: in a content example, or in `x-example-names`. */
const claimants = (o: Operation, name: string): number[] =>
  responsesOf(o)
    .filter(
      ([, r]) =>
        (r['x-example-names'] ?? []).includes(name) ||
        Object.values(r.content ?? {}).some((m: any) => m.examples?.[name] !== undefined),
    )
    .map(([s]) => s);

/** Schemas with their component references pointed at one registered schema, so Ajv resolves them. */
const COMPONENTS_ID = 'https://svcmaps.invalid/components.json';
function relinked(v: any): any {
  if (Array.isArray(v)) return v.map(relinked);
  if (v === null || typeof v !== 'object') return v;
  const out: any = {};
  for (const [k, x] of Object.entries(v))
    out[k] =
      k === '$ref' && typeof x === 'string' && x.startsWith('#/components/schemas/')
        ? `${COMPONENTS_ID}#/$defs/${x.slice('#/components/schemas/'.length)}`
        : relinked(x);
  return out;
}

const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: COMPONENTS_ID, $defs: relinked(doc.components.schemas) });
const compiled = new Map<any, ValidateFunction>();
function validate(schema: any, value: unknown): string | undefined {
  let fn = compiled.get(schema);
  if (!fn) compiled.set(schema, (fn = ajv.compile(relinked(schema))));
  return fn(value) ? undefined : ajv.errorsText(fn.errors);
}

const baseType = (contentType: string | null): string => (contentType ?? '').split(';')[0]!.trim().toLowerCase();

/** The error codes a schema allows at `error.code` (or the flat `code`): allOf narrows, oneOf and anyOf widen. */
function codesOf(schema: any, level: 'envelope' | 'error' | 'code' = 'envelope'): Set<string> | undefined {
  const s = deref(schema);
  let out: Set<string> | undefined;
  const meet = (c: Set<string> | undefined) => {
    if (c) out = out ? new Set([...out].filter((x) => c.has(x))) : c;
  };
  if (level === 'code') {
    if (s.enum) meet(new Set(s.enum));
    if (s.const !== undefined) meet(new Set([s.const]));
  }
  for (const sub of s.allOf ?? []) meet(codesOf(sub, level));
  const alternatives = [...(s.oneOf ?? []), ...(s.anyOf ?? [])].map((sub: any) => codesOf(sub, level));
  if (alternatives.length && alternatives.every(Boolean))
    meet(new Set(alternatives.flatMap((c: Set<string> | undefined) => [...c!])));
  if (level === 'envelope' && s.properties?.error) meet(codesOf(s.properties.error, 'error'));
  if (level !== 'code' && s.properties?.code) meet(codesOf(s.properties.code, 'code'));
  return out;
}

describe('docs/openapi.yaml', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('names every code of the error catalogue, and each response only codes of its own status', () => {
    expect([...doc.components.schemas.ErrorCode.enum].sort()).toEqual(Object.keys(ERRORS).sort());
    const wrong: string[] = [];
    for (const o of operations)
      for (const [status, r] of responsesOf(o)) {
        const where = `${o.method} ${o.path} ${status}`;
        const json = r.content?.['application/json'];
        const codes = new Set<string>(r['x-bare-error-codes'] ?? []);
        // Health's 503 is its own flat JSON, not an error of the catalogue.
        if (status >= 400 && json && /Error|Envelope/.test(JSON.stringify(json.schema))) {
          const enveloped = codesOf(json.schema);
          if (!enveloped?.size) wrong.push(`${where}: no error codes in its schema`);
          for (const c of enveloped ?? []) codes.add(c);
        }
        if (status >= 400 && !r.content && !r['x-bare-error-codes']?.length)
          wrong.push(`${where}: a response without a body names no x-bare-error-codes`);
        for (const c of codes) {
          const spec = (ERRORS as Record<string, { status: number }>)[c];
          if (spec?.status !== status) wrong.push(`${where}: ${c} is answered with ${spec?.status ?? 'no status'}`);
        }
      }
    expect(wrong).toEqual([]);
  });

  it('has response examples that match their schemas, and request examples each claimed by one response', () => {
    const wrong: string[] = [];
    for (const o of operations) {
      for (const [status, r] of responsesOf(o))
        for (const [type, media] of Object.entries<any>(r.content ?? {}))
          for (const [name, ex] of Object.entries<any>(media.examples ?? {})) {
            if (!('value' in ex)) continue;
            const why = type === 'application/json' ? validate(media.schema, ex.value) : undefined;
            if (why) wrong.push(`${o.method} ${o.path} ${status} example ${name}: ${why}`);
          }
      for (const name of exampleNames(o)) {
        const claimed = claimants(o, name);
        if (claimed.length !== 1)
          wrong.push(`${o.method} ${o.path} example ${name}: claimed by [${claimed.join(', ')}]`);
        for (const p of o.params.filter((p) => p.in === 'path'))
          if (!p.examples?.[name]) wrong.push(`${o.method} ${o.path} example ${name}: no value for {${p.name}}`);
        // An example that succeeds is a well-formed request: its values fit the parameter and body schemas.
        if (claimed.length === 1 && claimed[0]! < 300) {
          for (const p of o.params)
            if (p.examples?.[name]) {
              const why = validate(p.schema, p.examples[name].value);
              if (why) wrong.push(`${o.method} ${o.path} example ${name}, ${p.name}: ${why}`);
            }
          const body = o.op.requestBody && deref(o.op.requestBody).content['application/json'];
          if (body?.examples?.[name]) {
            const why = validate(body.schema, body.examples[name].value);
            if (why) wrong.push(`${o.method} ${o.path} example ${name}, body: ${why}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('docs/openapi.yaml against a fresh server', () => {
  let s: TestServer;
  let dataDir: string;
  const creds: Record<string, { user: Record<string, string>; admin: Record<string, string> }> = {};
  let tileToken = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'svcmaps-openapi-'));
    s = await startPlacesServer(dataDir, { auth: { jwt_secret: JWT_SECRET } });
    const exp = Math.floor(Date.now() / 1000) + 3600;
    const bearer = (role: string) => ({
      Authorization: `Bearer ${signJwt({ sub: role, role, exp }, Buffer.from(JWT_SECRET))}`,
    });
    creds.apiKey = { user: { 'X-API-Key': s.key().key }, admin: { 'X-API-Key': s.key({ role: 'super_admin' }).key } };
    creds.bearerJwt = { user: bearer('user'), admin: bearer('super_admin') };
    const minted = await s.post('/maps/v1/tile-token', '', creds.apiKey.user);
    expect(minted.status).toBe(200);
    tileToken = ((await minted.json()) as { data: { token: string } }).data.token;
  });

  afterAll(async () => {
    await s?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('documents exactly the routes the router registers', () => {
    const router = (s.app.pipeline as unknown as { d: PipelineDeps }).d.router;
    const registered = router.list().map((r) => `${r.method} ${r.pattern.replace(/[:*]([A-Za-z_]\w*)/g, '{$1}')}`);
    expect(new Set(registered).size).toBe(registered.length);
    expect(registered.sort()).toEqual(operations.map((o) => `${o.method} ${o.path}`).sort());
  });

  it('serves the document as JSON at /maps/v1/openapi.json, without a credential, with an ETag', async () => {
    const r = await s.get('/maps/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(baseType(r.headers.get('content-type'))).toBe('application/json');
    expect(r.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(await r.json()).toEqual(doc);
    const tag = r.headers.get('etag');
    expect(tag).toMatch(/^"[^"]+"$/);
    const again = await s.get('/maps/v1/openapi.json', { 'If-None-Match': tag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('answers every request example with a documented status, headers and body', async () => {
    const wrong: string[] = [];
    let sent = 0;
    for (const o of operations) {
      const names: (string | undefined)[] = exampleNames(o);
      if (!names.length) names.push(undefined);
      const admin = o.path.startsWith('/admin');
      const schemes: string[] = o.op.security?.length ? o.op.security.map((req: object) => Object.keys(req)[0]) : [''];
      for (const name of names)
        for (const scheme of schemes) {
          const where = `${o.method} ${o.path}${name ? ` example ${name}` : ''}${scheme ? ` with ${scheme}` : ''}`;
          const query = new URLSearchParams();
          const headers: Record<string, string> = {};
          let path = o.path;
          for (const p of o.params) {
            const ex = name === undefined ? undefined : p.examples?.[name];
            if (!ex) continue;
            const value = String(ex.value);
            if (p.in === 'path') path = path.replace(`{${p.name}}`, value.split('/').map(encodeURIComponent).join('/'));
            else if (p.in === 'query') query.set(p.name, value);
            else if (p.in === 'header') headers[p.name] = value;
          }
          if (scheme === 'tileToken') query.set('t', tileToken);
          else if (scheme) Object.assign(headers, creds[scheme]![admin ? 'admin' : 'user']);
          const body = name && o.op.requestBody && deref(o.op.requestBody).content['application/json'].examples?.[name];
          if (body) headers['Content-Type'] = 'application/json';
          const url = `${s.url}${path}${query.size ? `?${query.toString()}` : ''}`;
          const res = await fetch(url, {
            method: o.method,
            headers,
            body: body ? JSON.stringify(body.value) : o.method === 'POST' ? '' : undefined,
            redirect: 'manual',
          });
          sent++;
          const bytes = Buffer.from(await res.arrayBuffer());
          const expected = name === undefined ? undefined : claimants(o, name)[0];
          if (expected !== undefined && res.status !== expected) {
            wrong.push(`${where}: ${res.status}, documented ${expected}`);
            continue;
          }
          const documented = o.op.responses[String(res.status)];
          if (!documented) {
            wrong.push(`${where}: ${res.status} is not documented`);
            continue;
          }
          const r = deref(documented);
          for (const [h, spec] of Object.entries<any>(r.headers ?? {})) {
            const header = deref(spec);
            const value = res.headers.get(h);
            if (value === null) {
              if (header.required) wrong.push(`${where}: no ${h} header`);
              continue;
            }
            const typed = header.schema?.type === 'integer' && /^-?\d+$/.test(value) ? Number(value) : value;
            const why = validate(header.schema, typed);
            if (why) wrong.push(`${where}: ${h}: ${value}: ${why}`);
          }
          const type = baseType(res.headers.get('content-type'));
          if (!r.content) {
            if (bytes.length)
              wrong.push(`${where}: a ${res.status} documented without a body has ${bytes.length} bytes`);
          } else if (!bytes.length) {
            if (!r['x-bare-error-codes']) wrong.push(`${where}: an empty ${res.status} is documented with a body`);
          } else if (!r.content[type]) {
            wrong.push(`${where}: Content-Type ${type} is not documented for ${res.status}`);
          } else if (type === 'application/json') {
            const why = validate(r.content[type].schema, JSON.parse(bytes.toString('utf8')));
            if (why) wrong.push(`${where}: ${res.status} body: ${why}`);
          }
        }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(operations.length);
  });
});

describe('GET /maps/v1/openapi.json', () => {
  it('reads the document once; a document that cannot be read fails that request only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svcmaps-openapi-file-'));
    try {
      const file = join(dir, 'openapi.yaml');
      const router = new Router();
      register(router, {} as Services, file);
      const route = router.list()[0]!;
      const ask = (headers: Record<string, string> = {}) =>
        Promise.resolve(
          route.handler({
            req: {
              method: 'GET',
              path: route.pattern,
              query: new URLSearchParams(),
              headers,
              ip: '127.0.0.1',
              requestId: 'r',
            },
            params: {},
            miss: false,
          }),
        );
      await expect(ask()).rejects.toThrow(/ENOENT/);
      writeFileSync(file, 'openapi: 3.1.0\ninfo:\n  title: first\n');
      const first: HttpReply = await ask();
      expect(first.status).toBe(200);
      expect(JSON.parse(String(first.body))).toEqual({ openapi: '3.1.0', info: { title: 'first' } });
      writeFileSync(file, 'openapi: 3.1.0\ninfo:\n  title: second\n');
      const again = await ask();
      expect(again.body).toBe(first.body);
      expect((await ask({ 'if-none-match': first.headers['ETag']! })).status).toBe(304);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
