import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type AddressInfo } from 'node:net';
import { createElement } from 'react';
import { render } from 'ink-testing-library';
import { EventEmitter } from 'node:events';
import { cli } from '../helpers/cli.js';
import { makeSelftestCommand } from '../../src/cli/selftest.js';
import { SelftestView } from '../../src/cli/ui/selftest-view.js';
import type { SelftestReport } from '../../src/ops/selftest/runner.js';
import type { CheckState } from '../../src/ops/selftest/types.js';
import { startPlacesServer, type TestServer } from '../helpers/app.js';

// The self-test copies the data directory into os.tmpdir(): a folder of this file's own (os.tmpdir() reads TMPDIR at
// each call, and the CLI children inherit it), so self-tests of other files running at the same time do not change
// the count of copies.
const ownTmp = mkdtempSync(join(tmpdir(), 'svcmaps-st-tmp-'));
process.env.TMPDIR = ownTmp;
afterAll(() => rmSync(ownTmp, { recursive: true, force: true }));
const selftestTemps = () => readdirSync(tmpdir()).filter((n) => n.startsWith('svcmaps-selftest-')).length;

describe('svcmaps selftest on a throwaway copy', () => {
  let data: string;
  beforeAll(() => {
    data = mkdtempSync(join(tmpdir(), 'svcmaps-st-'));
  });
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('passes every capability on a fresh data directory, skips directions without a road graph, and cleans up', async () => {
    const temps = selftestTemps();
    const r = await cli('selftest', '--data', data, '--json');
    expect(r.code, r.err + r.out).toBe(0);
    const report = JSON.parse(r.out) as SelftestReport;
    expect(report).toMatchObject({ mode: 'local', verdict: 'pass', failed: 0, skipped: 2 });
    const byId = Object.fromEntries(report.checks.map((c) => [c.id, c]));
    expect(Object.keys(byId)).toEqual([
      'health',
      'auth',
      'tokens',
      'limits',
      'autocomplete-en',
      'autocomplete-ar',
      'places-imported',
      'geocode',
      'reverse',
      'directions',
      'tiles-cold',
      'tiles-hot',
      'tiles-warm',
      'style',
      'glyphs',
      'staticmap',
      'metrics',
    ]);
    expect(byId.directions).toMatchObject({
      status: 'skip',
      detail: 'skipped: no road graph imported (svcmaps import <file.osm.pbf>)',
    });
    expect(byId['autocomplete-ar']!.detail).toContain('عمّان');
    expect(byId['places-imported']).toMatchObject({
      status: 'skip',
      detail: 'skipped: no places extract imported (svcmaps import <file.osm.pbf | .geojsonl>)',
    });
    expect(byId.tokens!.detail).toContain('dead on revoke');
    expect(byId.limits!.detail).toContain('2nd miss at 1/day refused');
    for (const c of report.checks) expect(c.ms).toBeGreaterThanOrEqual(0);
    // The operator's directory is untouched (only a copy was served) and the copy is gone.
    expect(readdirSync(data)).toEqual([]);
    expect(selftestTemps()).toBe(temps);
  }, 60_000);
});

describe('svcmaps selftest interrupted', () => {
  it('Ctrl-C stops the run, exits 130 and still removes the temporary copy', async () => {
    const data = mkdtempSync(join(tmpdir(), 'svcmaps-st-int-'));
    const temps = selftestTemps();
    const signals = new EventEmitter();
    let out = '';
    const io = {
      out: (t: string) => {
        out += t;
        if (t.startsWith('started on ')) setImmediate(() => signals.emit('SIGINT'));
      },
      err: () => undefined,
      env: {},
    };
    const cmd = makeSelftestCommand(io, signals).exitOverride();
    const err = await cmd.parseAsync(['--data', data], { from: 'user' }).then(
      () => undefined,
      (e) => e,
    );
    expect(err).toMatchObject({
      name: 'CliError',
      exitCode: 130,
      message: 'selftest interrupted; nothing was changed',
    });
    expect(out).toMatch(/started on http:\/\/127\.0\.0\.1:\d+ .*\n(.*\n)*interrupted\n$/);
    expect(out).not.toMatch(/^PASS/m);
    expect(selftestTemps()).toBe(temps);
    expect(signals.listenerCount('SIGINT')).toBe(0);
    rmSync(data, { recursive: true, force: true });
  }, 30_000);
});

describe('svcmaps selftest against a running server', () => {
  let s: TestServer;
  let data: string;
  beforeAll(async () => {
    data = mkdtempSync(join(tmpdir(), 'svcmaps-st-remote-'));
    s = await startPlacesServer(data);
  });
  afterAll(async () => {
    await s?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('checks with the given key, never exhausts it, and prints a plain checklist when not on a terminal', async () => {
    const key = s.key({ perMinute: 1000 }).key;
    const r = await cli('selftest', '--url', s.url, '--key', key);
    expect(r.code, r.out).toBe(0);
    const lines = r.out.trim().split('\n');
    expect(lines[0]).toBe(`svcmaps selftest — running server ${s.url}`);
    expect(lines.filter((l) => /^✓ /.test(l))).toHaveLength(14);
    expect(r.out).toMatch(/^✓ limits: rate and daily quota +\d+ ms {2}headers only \(limit 1000\/min/m);
    expect(r.out).toMatch(/^– metrics \(\/admin\/metrics\) .*skipped: the key is not super_admin/m);
    expect(r.out).toMatch(/^– directions on imported roads .*skipped: no road route in Amman/m);
    expect(r.out).toMatch(/^– search: imported places .*skipped: only checked on a data directory copy/m);
    expect(lines.at(-1)).toMatch(/^PASS: 14 passed, 3 skipped in \d+\.\d s$/);

    // --strict turns skips (data not imported, checks not possible with this key) into a failure.
    const strict = await cli('selftest', '--url', s.url, '--key', key, '--strict');
    expect(strict.code).toBe(1);
    expect(strict.out).toMatch(/\nFAIL: 14 passed, 3 skipped in \d+\.\d s \(--strict: skips fail\)\n$/);
    expect(strict.err).toBe('svcmaps: selftest failed: 0 failed, 3 skipped (--strict)\n');
  }, 30_000);

  it('fails with exit 1 and says why when a capability is broken (here: a revoked key)', async () => {
    const k = s.key();
    s.app.services.keyAdmin.revoke(k.id);
    const r = await cli('selftest', '--url', s.url, '--key', k.key, '--json');
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out) as SelftestReport;
    expect(report.verdict).toBe('fail');
    expect(report.checks.find((c) => c.id === 'auth')).toMatchObject({
      status: 'fail',
      detail: 'valid key: expected 200, got 401 INVALID_API_KEY',
    });
    expect(r.err).toMatch(/^svcmaps: selftest failed: \d+ failed\n$/);
  }, 30_000);

  it('reports an unreachable server as failed checks, and bad flag combinations in one line', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const r = await cli('selftest', '--url', `http://127.0.0.1:${closed}`, '--key', 'k', '--json');
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out).checks[0]).toMatchObject({
      id: 'health',
      status: 'fail',
      detail: 'fetch failed (ECONNREFUSED)',
    });
    for (const args of [
      ['--url', s.url],
      ['--key', 'x'],
      ['--url', s.url, '--key', 'x', '--data', data],
    ]) {
      const bad = await cli('selftest', ...args);
      expect(bad.code).toBe(1);
      expect(bad.err.trim().split('\n')).toHaveLength(1);
    }
    expect(existsSync(join(data, 'svcmaps.db'))).toBe(true);
  });
});

describe('selftest live view (ink)', () => {
  const states = (over: Partial<Record<string, Partial<CheckState>>>): CheckState[] =>
    ['health', 'tiles-cold', 'directions'].map((id) => ({ id, label: id, status: 'pending', ...over[id] }));

  it('draws the checklist as checks run, then the verdict', () => {
    const view = render(
      createElement(SelftestView, {
        title: 'svcmaps selftest — copy of /data',
        phase: 'starting…',
        states: states({}),
      }),
    );
    expect(view.lastFrame()).toContain('starting…');
    expect(view.lastFrame()).toMatch(/· health/);
    view.rerender(
      createElement(SelftestView, {
        title: 't',
        states: states({
          health: { status: 'pass', ms: 12, detail: 'database ok' },
          'tiles-cold': { status: 'running' },
        }),
      }),
    );
    expect(view.lastFrame()).toMatch(/✓ health +12 ms {2}database ok/);
    expect(view.lastFrame()).toMatch(/… tiles-cold/);
    const done = states({
      health: { status: 'pass', ms: 12 },
      'tiles-cold': { status: 'fail', ms: 30, detail: 'tile came from "cache"' },
      directions: { status: 'skip', ms: 0, detail: 'skipped: no road graph imported' },
    });
    const report: SelftestReport = {
      target: 'x',
      mode: 'local',
      verdict: 'fail',
      passed: 1,
      failed: 1,
      skipped: 1,
      ms: 2500,
      checks: done,
    };
    view.rerender(createElement(SelftestView, { title: 't', states: done, report }));
    const frame = view.lastFrame()!;
    expect(frame).toMatch(/✗ tiles-cold +30 ms {2}tile came from "cache"/);
    expect(frame).toMatch(/– directions +0 ms {2}skipped: no road graph imported/);
    expect(frame.trim().split('\n').at(-1)).toBe('FAIL: 1 passed, 1 failed, 1 skipped in 2.5 s');
    view.unmount();
  });
});
