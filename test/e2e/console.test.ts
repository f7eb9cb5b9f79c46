import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startPlacesServer, startServer, type TestServer } from '../helpers/app.js';
import { CLI } from '../helpers/cli.js';
import { MONACO_PBF } from '../helpers/fixtures.js';
import { chromiumAvailable, launchChromium } from '../helpers/browser.js';
import { regionalGazetteer } from '../helpers/gazetteer.js';

const ROOT = join(__dirname, '..', '..');
const OUT = join(ROOT, 'test-output', 'console');
const haveChromium = chromiumAvailable('the console browser test');

let consoleBuilt = false;

/** Builds dist/console from the sources, as `npm run build` does (once for this file's tests). */
function buildConsole(): void {
  if (consoleBuilt) return;
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-console.mjs')], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`console build failed: ${r.stderr}`);
  consoleBuilt = true;
}

/** A raw request line, so the path reaches the server exactly as written (fetch would normalise `..`). */
function rawGet(url: string, path: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () =>
      sock.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`),
    );
    let got = '';
    sock.on('data', (d) => (got += d.toString('latin1')));
    sock.on('end', () => resolve(got));
    sock.on('error', reject);
  });
}

describe('console pages over HTTP', () => {
  let s: TestServer;
  let off: TestServer;
  beforeAll(async () => {
    buildConsole();
    s = await startServer();
    off = await startServer({ console: { enabled: false } });
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await off?.close();
  });

  it('serves index.html no-cache with a strict CSP and hashed assets immutable, with ETags and 304', async () => {
    for (const path of ['/', '/console/']) {
      const r = await s.get(path);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(r.headers.get('cache-control')).toBe('no-cache');
      const csp = r.headers.get('content-security-policy')!;
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain('worker-src');
      expect(csp).toMatch(/img-src [^;]*data: blob:/);
      expect(r.headers.get('x-content-type-options')).toBe('nosniff');
      const html = await r.text();
      expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script
      const again = await s.get(path, { 'If-None-Match': r.headers.get('etag')! });
      expect(again.status).toBe(304);
    }
    const html = await (await s.get('/')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBe(3); // MapLibre's stylesheet, the console's stylesheet and script
    for (const a of assets) {
      const r = await s.get(a);
      expect(r.status).toBe(200);
      expect(r.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await s.get(a, { 'If-None-Match': r.headers.get('etag')! })).status).toBe(304);
    }
    const js = assets.find((a) => a.endsWith('.js'))!;
    const maplibre = html.match(/\/console\/assets\/(maplibre-[0-9a-f]+)\//)![1];
    expect((await s.get(`/console/assets/${maplibre}/maplibre-gl.mjs`)).status).toBe(200);
    expect((await s.get(`/console/assets/${maplibre}/maplibre-gl-worker.mjs`)).status).toBe(200);
    expect(js).toMatch(/console-[0-9a-f]{12}\.js$/);
  });

  it('finds nothing outside the built console, whatever the path says', async () => {
    for (const path of [
      '/console/../package.json',
      '/console/%2e%2e/package.json',
      '/console/assets/..%2f..%2fpackage.json',
      '/console/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
      '/console//etc/passwd',
      '/console/index.html%00.js',
    ]) {
      const got = await rawGet(s.url, path);
      expect(got, path).not.toContain('"name": "svcmaps"');
      expect(got.slice(0, 12), path).toMatch(/^HTTP\/1\.1 (400|404)/);
    }
    expect((await s.get('/console/assets/nothing.js')).status).toBe(404);
  });

  it('is absent with console.enabled false', async () => {
    expect((await off.get('/')).status).toBe(404);
    expect((await off.get('/console/')).status).toBe(404);
  });
});

describe.skipIf(!haveChromium)('the console in headless Chromium', () => {
  let s: TestServer;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  let admin: { id: string; key: string };
  const problems: string[] = [];
  const failed: string[] = [];
  const mints: string[] = [];
  const data = mkdtempSync(join(tmpdir(), 'svcmaps-console-'));
  const shot = (name: string) => page.screenshot({ path: join(OUT, `${name}.png`) });
  const axeSource = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  /** axe-core's serious and critical violations on the page as it is now. */
  const axeAudit = async (p: Page): Promise<string[]> => {
    // evaluate() runs outside the page's CSP, so the checker needs no inline script allowance.
    if (!(await p.evaluate(() => 'axe' in window))) await p.evaluate(axeSource);
    return p.evaluate(async () => {
      const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
      return r.violations
        .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
        .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
    });
  };

  beforeAll(async () => {
    buildConsole();
    // The Monaco extract (© OpenStreetMap contributors, ODbL) for places, roads and cartography, beside the
    // gazetteer's places of Monaco (its Arabic name among them): the import rebuilds the search index over those
    // instead of the gazetteer's 200,000.
    await regionalGazetteer(data, ['mc']);
    const r = spawnSync(process.execPath, [...CLI, 'import', MONACO_PBF, '--data', data, '--json'], {
      encoding: 'utf8',
      env: { ...process.env, SVCMAPS_DATA: '' },
    });
    if (r.status !== 0) throw new Error(`import failed (${r.status}): ${r.stderr}`);
    // A one-minute tile token: the console renews it every few seconds, so the renewal happens during the test.
    s = await startPlacesServer(data, { auth: { tile_token_ttl_s: 60 } });
    admin = s.key({ role: 'super_admin', name: 'operator' });
    browser = await launchChromium();
    ctx = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    page = await ctx.newPage();
    page.on('console', (m) => {
      // Chromium's software GL reports driver performance notes as warnings: not the page's.
      if (m.type() === 'warning' && m.text().includes('GL Driver Message')) return;
      if (m.type() === 'error' || m.type() === 'warning') problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    page.on('response', (r) => {
      // (a token minted as the browser closes after the last test has a body nobody can read any more: not counted)
      if (r.url().includes('/maps/v1/tile-token') && r.ok())
        r.json().then(
          (j: { data: { token: string } }) => mints.push(j.data.token),
          () => {},
        );
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url().replace(/([?&](t|token)=)[^&]+/g, '$1…')}`);
    });
    mkdirSync(OUT, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('signs in with an API key kept in sessionStorage only and draws the raster-nav map', async () => {
    const tiles: number[] = [];
    page.on('response', (r) => {
      if (r.url().includes('/maps/v1/tiles/')) tiles.push(r.status());
    });
    await page.goto(`${s.url}/`);
    await expect.poll(() => page.evaluate(() => document.documentElement.dir)).toBe('ltr');
    await page.getByLabel('API key').fill(admin.key);
    const t0 = Date.now();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('.maplibregl-canvas').waitFor({ timeout: 20_000 });
    // Tiles the renderer sheds under load (503/504, Retry-After) are accounted for in the last test.
    await expect
      .poll(() => tiles.filter((st) => st === 200).length, { timeout: 20_000, interval: 20 })
      .toBeGreaterThan(0);
    console.info(`first tile drawn ${Date.now() - t0} ms after signing in`);
    // The first paint with the server cold too (tiles rendered on demand): from the sign-in to MapLibre's 'load'.
    await page.waitForFunction(() => performance.getEntriesByName('svcmaps:map-load').length > 0, null, {
      timeout: 20_000,
    });
    const serverCold = await page.evaluate(
      () =>
        performance.getEntriesByName('svcmaps:map-load')[0]!.startTime -
        performance.getEntriesByName('svcmaps:signin')[0]!.startTime,
    );
    console.info(`first map paint ${Math.round(serverCold)} ms after signing in (browser and tile caches cold)`);
    expect(tiles.every((st) => st === 200 || st === 503 || st === 504)).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('svcmaps.apiKey'))).toBe(admin.key);
    expect(await page.evaluate(() => JSON.stringify(localStorage))).not.toContain(admin.key);
    expect(page.url()).not.toContain(admin.key);
    // The map canvas keeps MapLibre's own accessible label.
    expect(await page.locator('.maplibregl-canvas').getAttribute('aria-label')).toBeTruthy();
    await shot('1-signed-in');
  }, 60_000);

  it('paints the map promptly after opening the page, cold (empty browser cache) and warm', async () => {
    /** Milliseconds from the navigation's start to MapLibre's 'load' (the first complete frame) on this page. */
    const paintOf = async (p: Page): Promise<number> => {
      await p.waitForFunction(() => performance.getEntriesByName('svcmaps:map-load').length > 0, null, {
        timeout: 20_000,
      });
      return Math.round(await p.evaluate(() => performance.getEntriesByName('svcmaps:map-load')[0]!.startTime));
    };
    const cold: number[] = [];
    const warm: number[] = [];
    // Twice each, the better one kept: the test machine is shared. A fresh context is an empty browser cache;
    // the key is in sessionStorage as after a sign-in, so the page signs itself in.
    for (let i = 0; i < 2; i++) {
      const fresh = await browser.newContext({ viewport: { width: 1100, height: 720 } });
      await fresh.addInitScript((k) => sessionStorage.setItem('svcmaps.apiKey', k), admin.key);
      const p = await fresh.newPage();
      await p.goto(`${s.url}/`);
      cold.push(await paintOf(p));
      await p.reload();
      warm.push(await paintOf(p));
      await fresh.close();
    }
    console.info(`first map paint: cold ${cold.join(', ')} ms, warm ${warm.join(', ')} ms from the navigation's start`);
    // The 1 s goal is measured on a quiet machine (figures in the README, printed above on every run); a test run
    // shares its cores with other test files, so this bound only catches a paint that waits on something it must
    // not (a lost tile token, a fetch chain, a blocking asset), which takes seconds, not tens of milliseconds.
    expect(Math.min(...cold)).toBeLessThan(3000);
    expect(Math.min(...warm)).toBeLessThan(3000);
  }, 60_000);

  it('searches "Monaco" with keyboard navigation and shows the place', async () => {
    const box = page.getByRole('combobox', { name: 'Search' });
    await box.fill('Monaco');
    await page.getByRole('option').first().waitFor({ timeout: 10_000 });
    expect(await page.getByRole('option').count()).toBeGreaterThan(0);
    await box.press('ArrowDown');
    expect(await box.getAttribute('aria-activedescendant')).toBe('search-opt-0');
    await box.press('Enter');
    await expect.poll(() => page.locator('#place-name').textContent(), { timeout: 10_000 }).toMatch(/Monaco/);
    expect(await page.getByRole('option').count()).toBe(0); // list closed
    await page.waitForTimeout(1200); // the fly-to
    await shot('2-search-monaco');
    // Arabic search text finds the same city.
    await box.fill('موناكو');
    await page.getByRole('option').first().waitFor({ timeout: 10_000 });
    const names = await page.getByRole('option').allTextContents();
    expect(names.join(' ')).toMatch(/Monaco|موناكو/);
    await box.press('Escape');
    await box.fill('');
  }, 60_000);

  it('routes between two clicks on the map and lists the maneuvers', async () => {
    const canvas = page.locator('.maplibregl-canvas');
    const bb = (await canvas.boundingBox())!;
    const clickAt = async (dx: number, dy: number, which: 'from' | 'to') => {
      const reverse = page.waitForResponse((r) => r.url().includes('/maps/v1/reverse'));
      await page.mouse.click(bb.x + bb.width / 2 + dx, bb.y + bb.height / 2 + dy);
      expect((await reverse).status()).toBe(200);
      await page
        .getByRole('button', { name: which === 'from' ? 'Directions from here' : 'Directions to here' })
        .click();
    };
    await clickAt(-120, -40, 'from');
    const directions = page.waitForResponse((r) => r.url().includes('/maps/v1/directions'));
    await clickAt(120, 40, 'to');
    const res = await directions;
    expect(res.status()).toBe(200);
    expect(res.request().postDataJSON()).toMatchObject({ overview: 'full' }); // drawn at street zoom too
    const body = (await res.json()).data;
    await page.locator('#maneuvers li').first().waitFor({ timeout: 10_000 });
    expect(body.routes.length).toBeGreaterThan(0);
    // Every route the API gave is drawn and listed: the primary and its alternatives.
    expect(await page.locator('.routes li').count()).toBe(body.routes.length);
    expect(await page.locator('#maneuvers li').count()).toBe(body.routes[0].maneuvers.length);
    const first = await page.locator('#maneuvers li').first().textContent();
    expect(first).toMatch(/\d+ (m|km) · \d+ (s|min)/);
    await page.waitForTimeout(800); // fit to the route
    await shot('3-route');
  }, 60_000);

  it('switches to Arabic: right-to-left, Arabic maneuvers, locale=ar on API calls', async () => {
    const again = page.waitForResponse((r) => r.url().includes('/maps/v1/directions'));
    await page.getByRole('button', { name: 'العربية' }).click();
    const res = await again;
    expect(new URL(res.url()).searchParams.get('locale')).toBe('ar');
    expect(await page.evaluate(() => document.documentElement.dir)).toBe('rtl');
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('ar');
    await expect
      .poll(() => page.locator('#maneuvers li').first().textContent(), { timeout: 10_000 })
      .toMatch(/[\u0600-\u06FF]/);
    expect(await page.getByRole('combobox', { name: 'بحث' }).count()).toBe(1);
    await shot('4-arabic');
    await page.getByRole('button', { name: 'English' }).click();
    expect(await page.evaluate(() => document.documentElement.dir)).toBe('ltr');
  }, 60_000);

  it('adds a stop between the ends: the multi-leg answer drawn with its totals', async () => {
    const canvas = (await page.locator('.maplibregl-canvas').boundingBox())!;
    const reverse = page.waitForResponse((r) => r.url().includes('/maps/v1/reverse'));
    await page.mouse.click(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2 - 90);
    await reverse;
    const directions = page.waitForResponse((r) => r.url().includes('/maps/v1/directions'));
    await page.getByRole('button', { name: 'Add as a stop' }).click();
    const res = await directions;
    expect(JSON.parse(res.request().postData()!).waypoints).toHaveLength(1);
    expect(res.status()).toBe(200);
    const body = (await res.json()).data;
    expect(body.legs).toBe(2);
    await expect.poll(() => page.locator('#dir-result .legs').textContent()).toMatch(/^Legs: 2 · /);
    expect(await page.locator('#dir-stops li').count()).toBe(1);
    await page.waitForTimeout(800);
    await shot('4b-stop');
  }, 60_000);

  it('shows API errors as readable messages in the chosen language', async () => {
    // A same-point route is refused by the API (SAME_POINT); the console says so in words.
    await page.getByRole('button', { name: 'Clear' }).click();
    const canvas = (await page.locator('.maplibregl-canvas').boundingBox())!;
    // Two clicks 2 px apart (the first marker stands above its point): closer than the API's 5 m.
    for (const [which, dy] of [
      ['Directions from here', 0],
      ['Directions to here', 2],
    ] as const) {
      const reverse = page.waitForResponse((r) => r.url().includes('/maps/v1/reverse'));
      await page.mouse.click(canvas.x + canvas.width / 2, canvas.y + canvas.height / 2 + dy);
      await reverse;
      await page.getByRole('button', { name: which }).click();
    }
    await expect.poll(() => page.locator('#status').textContent()).toBe('Start and end are the same point.');
    await page.getByRole('button', { name: 'Clear' }).click();
    // A console error for the refused request is the browser's own report of a 400, not the page's: drop it.
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 400/.test(p)));
    failed.splice(0, failed.length, ...failed.filter((f) => !/^400 .*\/maps\/v1\/directions/.test(f)));
  }, 60_000);

  it('creates a key (shown once) and revokes it as admin, with usage and status', async () => {
    await page.getByRole('button', { name: 'Admin' }).click();
    await page.locator('table.keys').waitFor({ timeout: 10_000 });
    // Every field of the form is labelled and reachable with Tab, in order, ending on the button.
    await page.getByLabel('Name').focus();
    const order = [await page.evaluate(() => document.activeElement!.id)];
    for (let i = 0; i < 7; i++) {
      await page.keyboard.press('Tab');
      order.push(await page.evaluate(() => document.activeElement!.id || document.activeElement!.textContent));
    }
    expect(order).toEqual([
      'new-key-name',
      'new-key-role',
      'new-key-plan',
      'new-key-per-minute',
      'new-key-daily',
      'new-key-expires',
      'new-key-expires-unit',
      'Create key',
    ]);
    // Filled and sent from the keyboard alone.
    await page.getByLabel('Name').fill('console-test');
    await page.getByLabel('Plan').fill('gold');
    await page.getByLabel('Per minute').fill('120');
    await page.getByLabel('Daily quota').fill('5,000');
    await page.getByLabel('Expires after').fill('30');
    await page.getByLabel('Expiry unit').selectOption('days');
    await page.getByLabel('Expiry unit').press('Tab');
    const posted = page.waitForRequest((r) => r.url().endsWith('/admin/keys') && r.method() === 'POST');
    await page.keyboard.press('Enter');
    expect(JSON.parse((await posted).postData()!)).toEqual({
      name: 'console-test',
      role: 'user',
      plan: 'gold',
      per_minute: 120,
      daily: 5000,
      expires_in_s: 30 * 86400,
    });
    const shown = page.locator('#new-key-value');
    await shown.waitFor({ timeout: 10_000 });
    const key = (await shown.textContent())!;
    expect(key).toMatch(/^cmk_live_[A-Za-z0-9_-]{32}$/);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-key-value');
    const created = s.app.services.keyAdmin.list().find((k) => k.name === 'console-test')!;
    expect(created).toMatchObject({ state: 'active', plan: 'gold', per_minute: 120, daily: 5000 });
    expect(Date.parse(created.expires_at!) - Date.now()).toBeGreaterThan(29.9 * 86400_000);
    expect(Date.parse(created.expires_at!) - Date.now()).toBeLessThan(30.1 * 86400_000);
    expect(await page.locator(`tr[data-key-id="${created.id}"]`).textContent()).toMatch(/gold.*120.*5,000/);
    expect(await page.locator('table.usage tbody tr').count()).toBeGreaterThanOrEqual(2);
    // Server status: the hot tier's hit rate per cache, its fill against capacity, uptime and the data loaded.
    const st = (await (await s.get('/admin/status', { 'X-API-Key': admin.key })).json()).data;
    expect(st.hot_tier.tiles.hits + st.hot_tier.tiles.misses).toBeGreaterThan(0); // the map asked for tiles
    expect(st.hot_tier.answers.hits + st.hot_tier.answers.misses).toBeGreaterThan(0); // searches and routes
    expect(await page.locator('#hot-tiles .rate').textContent()).toMatch(/^\d+(\.\d)?%$/);
    expect(await page.locator('#hot-answers .rate').textContent()).toMatch(/^\d+(\.\d)?%$/);
    expect(await page.locator('#hot-total').textContent()).toMatch(/ of 256 MB \(\d+(\.\d)?%\)$/);
    expect(await page.getByRole('table', { name: /Hot tier/ }).count()).toBe(1);
    expect(await page.locator('#uptime').textContent()).toMatch(/^\d+ (s|min)/);
    expect(await page.locator('#data-roads').textContent()).toMatch(/^[\d,]+ nodes, [\d,]+ edges; built /);
    expect(await page.locator('#data-places').textContent()).toMatch(/^[\d,]+ \(.*monaco/);
    expect(await page.locator('#data-render').textContent()).toMatch(/monaco/);
    expect(await page.locator('#data-mbtiles').textContent()).toMatch(/\.mbtiles: [\d,]+ tiles, /);
    await page.locator('#data-mbtiles').scrollIntoViewIfNeeded();
    await shot('5b-admin-status');
    await page.locator('#admin-title').scrollIntoViewIfNeeded();
    await shot('5-admin-created');
    await page.getByRole('button', { name: 'Revoke key console-test' }).click();
    await expect
      .poll(() => page.locator(`tr[data-key-id="${created.id}"] .state-revoked`).count(), { timeout: 10_000 })
      .toBe(1);
    expect(s.app.services.keyAdmin.show(created.id).state).toBe('revoked');
    // Shown once: a refresh no longer carries the full key.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await expect.poll(() => page.locator('#new-key-value').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    await shot('6-admin-revoked');
  }, 60_000);

  it('validates the create-key form in English and Arabic: its own checks and the API refusals', async () => {
    const posts: string[] = [];
    const onRequest = (r: { url(): string; method(): string }) => {
      if (r.url().endsWith('/admin/keys') && r.method() === 'POST') posts.push(r.url());
    };
    page.on('request', onRequest);
    const errors = page.locator('#new-key-errors li');
    // Checked on the page: nothing is sent, the fields are marked and the first wrong one has the focus.
    await page.getByLabel('Per minute').fill('abc');
    await page.getByLabel('Daily quota').fill('0');
    await page.getByLabel('Expires after').fill('30');
    await page.getByLabel('Expiry unit').selectOption('minutes');
    await page.getByLabel('Expiry unit').selectOption('hours');
    await page.getByLabel('Expires after').fill('0');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect
      .poll(() => errors.allTextContents())
      .toEqual([
        'Per minute: enter a whole number from 1 to 1,000,000,000.',
        'Daily quota: enter a whole number from 1 to 1,000,000,000,000.',
        'Expires after: from 1 minute to 100 years.',
      ]);
    expect(await page.getByLabel('Per minute').getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-key-per-minute');
    // The message is the field's description for a screen reader.
    expect(await page.locator('#new-key-daily-error').textContent()).toMatch(/^Daily quota: /);
    expect(posts).toEqual([]);
    await shot('5c-admin-validation');
    expect(await axeAudit(page)).toEqual([]); // the form showing its mistakes
    // The API's own refusal, shown by its field in words: the request is altered on its way to the real server.
    await page.route('**/admin/keys', (route) =>
      route.request().method() === 'POST'
        ? route.continue({ postData: JSON.stringify({ name: 'x', per_minute: 0 }) })
        : route.continue(),
    );
    await page.getByLabel('Per minute').fill('10');
    await page.getByLabel('Daily quota').fill('');
    await page.getByLabel('Expires after').fill('');
    const refused = page.waitForResponse((r) => r.url().endsWith('/admin/keys') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'Create key' }).click();
    expect((await refused).status()).toBe(400);
    await expect
      .poll(() => errors.allTextContents())
      .toEqual(['Per minute: enter a whole number from 1 to 1,000,000,000.']);
    expect(await page.getByLabel('Per minute').getAttribute('aria-invalid')).toBe('true');
    // In Arabic: the form, its checks and the API's refusal read in Arabic.
    await page.getByRole('button', { name: 'العربية' }).click();
    await page.getByLabel('في الدقيقة').waitFor();
    // Numbers as the browser writes them in Arabic (Chromium's ICU: Latin or Arabic-Indic digits).
    const ar = (n: number) => page.evaluate((x) => new Intl.NumberFormat('ar').format(x), n);
    await page.getByLabel('الحصة اليومية').fill('٠');
    await page.getByRole('button', { name: 'إنشاء مفتاح' }).click();
    await expect
      .poll(() => errors.allTextContents())
      .toEqual([`الحصة اليومية: أدخل عددًا صحيحًا من ${await ar(1)} إلى ${await ar(1e12)}.`]);
    await page.getByLabel('الحصة اليومية').fill('٥٠٠');
    const refusedAr = page.waitForResponse((r) => r.url().endsWith('/admin/keys') && r.request().method() === 'POST');
    await page.getByRole('button', { name: 'إنشاء مفتاح' }).click();
    expect((await refusedAr).status()).toBe(400);
    await expect
      .poll(() => errors.allTextContents())
      .toEqual([`في الدقيقة: أدخل عددًا صحيحًا من ${await ar(1)} إلى ${await ar(1e9)}.`]);
    expect(await page.locator('#hot-tiles .rate').textContent()).toMatch(/[0-9٠-٩]/);
    await shot('5d-admin-validation-ar');
    expect(await axeAudit(page)).toEqual([]); // the same in Arabic, right to left
    await page.unroute('**/admin/keys');
    page.off('request', onRequest);
    await page.getByRole('button', { name: 'English' }).click();
    // Only the two altered requests reached the server; the browser's own report of their 400s is not the page's.
    expect(posts).toHaveLength(2);
    problems.splice(0, problems.length, ...problems.filter((p) => !/status of 400/.test(p)));
    failed.splice(0, failed.length, ...failed.filter((f) => !/^400 .*\/admin\/keys$/.test(f)));
  }, 60_000);

  it('has no serious or critical axe-core violations on the views', async () => {
    expect(await axeAudit(page)).toEqual([]); // admin view
    await page.getByRole('button', { name: 'Map' }).click();
    expect(await axeAudit(page)).toEqual([]); // map view
    await page.getByRole('button', { name: 'العربية' }).click();
    expect(await axeAudit(page)).toEqual([]); // map view in Arabic
    await page.getByRole('button', { name: 'English' }).click();
    // The sign-in view, in a fresh tab of its own.
    const other = await ctx.newPage();
    await other.goto(`${s.url}/console/`);
    const signIn = await axeAudit(other);
    await other.close();
    expect(signIn).toEqual([]);
  }, 60_000);

  it('renews the tile token before it expires and asks tiles with the new one; the map centre is reachable by keyboard', async () => {
    await expect.poll(() => mints.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    const tileTokens: Array<{ t: string | null; status: number }> = [];
    page.on('response', (r) => {
      if (r.url().includes('/maps/v1/tiles/'))
        tileTokens.push({ t: new URL(r.url()).searchParams.get('t'), status: r.status() });
    });
    // Keyboard only: focus the map, zoom out and pan (tiles not seen yet), then ask what is at its centre.
    await page.locator('.maplibregl-canvas').focus();
    for (const k of ['-', '-', 'ArrowUp', 'ArrowUp', 'ArrowLeft']) await page.keyboard.press(k);
    const renewed = () => tileTokens.filter((x) => x.t !== mints[0] && mints.includes(x.t ?? ''));
    // And a long drag, so tiles never fetched before are certainly asked for.
    const bb = (await page.locator('.maplibregl-canvas').boundingBox())!;
    await page.mouse.move(bb.x + bb.width / 2, bb.y + bb.height / 2);
    await page.mouse.down();
    await page.mouse.move(bb.x + bb.width / 2 + 300, bb.y + bb.height / 2 + 200, { steps: 10 });
    await page.mouse.up();
    await expect.poll(() => renewed().length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(renewed().every((x) => x.status === 200)).toBe(true);
    await page.getByRole('button', { name: 'What is at the map centre?' }).press('Enter');
    await expect.poll(() => page.locator('#place-name').textContent()).toBe('Point on the map');
  }, 60_000);

  it('logged no errors or warnings in the browser console', () => {
    // A tile the renderer could not produce in time under load answers 503/504 with Retry-After by design (render
    // admission); Chromium logs it as a failed resource. Those are counted, not failures of the console.
    const shed = failed.filter((f) => /^50[34] .*\/maps\/v1\/tiles\//.test(f));
    if (shed.length) console.warn(`${shed.length} tile(s) shed under load: ${shed.join(', ')}`);
    const rest = (xs: string[]) => xs.filter((x) => !(/status of 50[34]/.test(x) && shed.length));
    expect({ problems: rest(problems), failed: failed.filter((f) => !shed.includes(f)) }).toEqual({
      problems: [],
      failed: [],
    });
  });
});
