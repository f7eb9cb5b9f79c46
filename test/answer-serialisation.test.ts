import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AnswerCache, WARM_MAX_BYTES } from '../src/cache/answer-cache.js';
import { HotTier } from '../src/cache/hot-tier.js';
import { silentLogger } from '../src/core/log.js';
import { Serialised, stringify } from '../src/core/serialised.js';
import { ok } from '../src/http/envelope.js';
import { AnswerCacheRepo } from '../src/store/answer-cache-repo.js';
import { openDb } from '../src/store/db.js';

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
});
