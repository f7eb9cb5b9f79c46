import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnswerCache, WARM_MAX_BYTES } from '../../src/cache/answer-cache.js';
import { HotTier } from '../../src/cache/hot-tier.js';
import { silentLogger } from '../../src/core/log.js';
import { Serialised, stringify } from '../../src/core/serialised.js';
import { ok } from '../../src/http/envelope.js';
import { AnswerCacheRepo } from '../../src/store/answer-cache-repo.js';
import { openDb } from '../../src/store/db.js';
import {
  decodeLeg,
  encodeLeg,
  enginePath,
  pathLine,
  pathManeuvers,
  polylineBytes,
} from '../../src/routing/answer/route-record.js';
import type { Maneuver } from '../../src/routing/types.js';
import {
  maneuversBytesMax,
  routerManeuversBytesMax,
  writeManeuvers,
  writeRouterManeuvers,
} from '../../src/routing/answer/maneuver-json.js';

/** writeManeuvers' text of `list`, in a buffer of exactly maneuversBytesMax(list) bytes. */
function written(list: Maneuver[]): string {
  const buf = Buffer.alloc(maneuversBytesMax(list));
  return buf.toString('utf8', 0, writeManeuvers(buf, 0, list));
}

describe('answers serialised once', () => {
  it('a Serialised value is embedded as its text: the same bytes JSON.stringify gives for its value', () => {
    const polyline = JSON.stringify({
      type: 'LineString',
      coordinates: [
        [35.9, 31.95],
        [-0.5, 1e-7],
      ],
    });
    const value = { routes: [{ polyline, name: 'شارع "الملك" \u00000\u0000' }], polyline, n: [1, 2] };
    const pre = {
      routes: [{ polyline: new Serialised(JSON.stringify(polyline)), name: value.routes[0]!.name }],
      polyline: new Serialised(JSON.stringify(polyline)),
      n: [1, 2],
    };
    expect(stringify(pre)).toBe(JSON.stringify(value));
    expect(ok(pre).body).toBe(`{"status":"success","data":${JSON.stringify(value)},"message":"OK"}`);
    // outside stringify(), e.g. in a log line or a cache entry, it is its value
    expect(JSON.stringify(pre)).toBe(JSON.stringify(value));
    expect(stringify(undefined)).toBeUndefined();
  });

  it('bytes embed as they are: the answer is its pieces, together the bytes JSON.stringify gives', () => {
    const route = { label: 'طريق', polyline: '{"type":"LineString","coordinates":[[35.9,31.95]]}' };
    const value = { routes: [route, route], name: 'شارع "الملك"', polyline: route.polyline };
    const pre = {
      routes: [new Serialised(Buffer.from(JSON.stringify(route))), new Serialised(Buffer.from(JSON.stringify(route)))],
      name: value.name,
      polyline: new Serialised(Buffer.from(JSON.stringify(route.polyline))),
    };
    const body = ok(pre).body as Uint8Array[];
    expect(Array.isArray(body)).toBe(true);
    expect(body).toContain(pre.routes[0]!.json); // embedded as they are, not copied
    expect(Buffer.concat(body).toString('utf8')).toBe(
      `{"status":"success","data":${JSON.stringify(value)},"message":"OK"}`,
    );
    expect(JSON.stringify(pre)).toBe(JSON.stringify(value));
  });
});

describe('route records', () => {
  const maneuvers: Maneuver[] = [
    { type: 'depart', instruction: 'انطلق شمالًا على "شارع" الملك', distance_m: 12.5, duration_s: 3, location: [1, 2] },
  ];
  const coords = [
    [35.9123456, 31.9512345],
    [-0.5, 1e-7],
  ];

  it('an engine path is its route object as JSON bytes, with the polyline, coordinates and maneuvers located', () => {
    const p = enginePath({
      label: 'Fastest',
      line: JSON.stringify(coords),
      distance_m: 1234.6,
      duration_s: 99.4,
      maneuvers,
    });
    const polyline = JSON.stringify({ type: 'LineString', coordinates: coords });
    const obj = JSON.parse(Buffer.from(p.json).toString('utf8')) as Record<string, unknown>;
    expect(obj).toEqual({ label: 'Fastest', distance_meters: 1235, duration_seconds: 99, polyline, maneuvers });
    expect(Buffer.from(polylineBytes(p)).toString('utf8')).toBe(JSON.stringify(polyline));
    expect(JSON.parse(pathLine(p))).toEqual(coords);
    expect(pathManeuvers(p)).toEqual(maneuvers);
    const bare = enginePath({ label: 'x', line: '[[1,2],[3,4]]', distance_m: 1, duration_s: 1 });
    expect(pathManeuvers(bare)).toBeUndefined();
    expect(JSON.parse(Buffer.from(bare.json).toString('utf8'))).not.toHaveProperty('maneuvers');
    expect(() => enginePath({ label: 'x', line: '[["1",2]]', distance_m: 1, duration_s: 1 })).toThrow(/numbers/);
  });

  it('maneuvers are written as the very bytes JSON.stringify gives, whatever their numbers and names', () => {
    const odd = [
      0,
      -0,
      1e-7,
      -1e-7,
      1e-6,
      9.9e-7,
      0.1 + 0.2,
      1 / 3,
      1063.4,
      -25.1317589,
      47.1234567,
      12.3,
      360,
      -180,
      0.5,
      99_999_999.9999999,
      123_456_789.5,
      1e21,
      2 ** 53,
      5e-324,
      NaN,
      Infinity,
      -Infinity,
      1e-7 * 3,
      7.0000001,
    ];
    const names = [
      '',
      'Bergstrasse',
      'شارع الملك فهد',
      'say "hi"',
      'back\\slash',
      'tab\tnew\nline\u0001',
      '😀 ok',
      '\ud800 lone',
    ];
    const list: Maneuver[] = odd.map((n, i) => ({
      type: i % 2 ? 'turn' : 'depart',
      ...(i % 3 ? { modifier: 'slight left' } : {}),
      ...(i % 5 === 0 ? { exit: i } : {}),
      instruction: `Turn onto ${names[i % names.length]}`,
      distance_m: n,
      duration_s: -n / 7,
      street_name: names[(i * 3) % names.length],
      location: [n, odd[(i + 5) % odd.length]!],
    }));
    // key order as given, undefined left out, as JSON.stringify does
    list.push({ instruction: 'x', type: 'arrive', distance_m: 0, duration_s: 0, modifier: undefined });
    expect(written(list)).toBe(JSON.stringify(list));
    // the numbers the router makes: whole 1e-7 degrees, tenths, and anything else, at random
    let seed = 1;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const many: Maneuver[] = Array.from({ length: 20_000 }, (_, i) => ({
      type: 'continue',
      instruction: '',
      distance_m: Math.round(rnd() * 1e7) / 10,
      duration_s: (rnd() - 0.5) * 10 ** (i % 12),
      location: [Math.round((rnd() - 0.5) * 360e7) / 1e7, Math.round((rnd() - 0.5) * 180e7) / 1e7],
    }));
    expect(written(many)).toBe(JSON.stringify(many));
    // the router's own shape (maneuvers.ts: every key, in one order, those that do not apply undefined), written
    // field by field in a buffer of exactly its bound
    const router = (m: Maneuver): Maneuver => ({
      type: m.type,
      modifier: m.modifier,
      exit: m.exit,
      instruction: m.instruction,
      distance_m: m.distance_m,
      duration_s: m.duration_s,
      street_name: m.street_name,
      location: m.location,
    });
    for (const l of [list.slice(0, -1).map(router), many.map(router)]) {
      const buf = Buffer.alloc(routerManeuversBytesMax(l));
      expect(buf.toString('utf8', 0, writeRouterManeuvers(buf, 0, l))).toBe(JSON.stringify(l));
    }
  });

  it('a leg encodes into one buffer and decodes to the same paths; anything else decodes to nothing', () => {
    const a = enginePath({ label: 'Fastest', line: JSON.stringify(coords), distance_m: 10, duration_s: 2, maneuvers });
    const b = enginePath({ label: 'Alternative 1', line: '[[1,2],[3,4]]', distance_m: 20, duration_s: 4 });
    const leg = decodeLeg(encodeLeg('svc', [a, b]))!;
    expect(leg.engine).toBe('svc');
    expect(leg.paths.map((p) => Buffer.from(p.json).toString('utf8'))).toEqual(
      [a, b].map((p) => Buffer.from(p.json).toString('utf8')),
    );
    expect(leg.paths.map(pathManeuvers)).toEqual([maneuvers, undefined]);
    expect(decodeLeg(Buffer.from('{"routes":[]}'))).toBeUndefined();
    expect(decodeLeg(encodeLeg('svc', [a]).subarray(0, 40))).toBeUndefined();
  });
});

describe('answer cache warm tier', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcmaps-answers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers longer than WARM_MAX_BYTES stay in memory only; shorter ones reach SQLite', () => {
    const db = openDb(join(dir, 'a.db'));
    const repo = new AnswerCacheRepo(db);
    const cache = new AnswerCache(new HotTier(64 * 2 ** 20), repo, silentLogger, 0);
    const big = { line: '1'.repeat(WARM_MAX_BYTES + 1) };
    cache.set('big', big);
    cache.set('small', { line: '1' });
    cache.flush();
    expect(cache.get('big')).toEqual({ value: big, tier: 'memory' });
    expect(repo.get('big')).toBeUndefined();
    expect(repo.get('small')).toBe('{"line":"1"}');
    db.close();
  });

  it('answers kept as bytes reach SQLite as they are and come back from there', () => {
    const db = openDb(join(dir, 'b.db'));
    const repo = new AnswerCacheRepo(db);
    const bytes = Buffer.from([0, 1, 2, 255, 0x7b]);
    new AnswerCache(new HotTier(2 ** 20), repo, silentLogger, 0).setBytes('leg', bytes);
    expect(repo.get('leg')).toBeUndefined(); // buffered until the flush
    const first = new AnswerCache(new HotTier(2 ** 20), repo, silentLogger, 0);
    first.setBytes('leg', bytes);
    first.flush();
    const cold = new AnswerCache(new HotTier(2 ** 20), repo, silentLogger, 0);
    expect(cold.getBytes('leg')).toEqual({ value: bytes, tier: 'sqlite' });
    expect(cold.getBytes('leg')).toEqual({ value: bytes, tier: 'memory' }); // promoted
    db.close();
  });

  it("hot-tier-only answers (the built-in router's legs) are neither written to SQLite nor read from it", () => {
    const db = openDb(join(dir, 'c.db'));
    const repo = new AnswerCacheRepo(db);
    const bytes = Buffer.from([7, 8, 9]);
    const first = new AnswerCache(new HotTier(2 ** 20), repo, silentLogger, 0);
    first.setBytes('local', bytes, false);
    first.setBytes('upstream', bytes);
    first.flush();
    expect(first.getBytes('local', false)).toEqual({ value: bytes, tier: 'memory' });
    expect(repo.get('local')).toBeUndefined();
    expect(repo.get('upstream')).toEqual(bytes);
    const cold = new AnswerCache(new HotTier(2 ** 20), repo, silentLogger, 0);
    expect(cold.getBytes('upstream', false)).toBeUndefined(); // in SQLite, but not looked up there
    expect(cold.getBytes('local')).toBeUndefined();
    db.close();
  });
});
