// Coverage of the code the tests run outside vitest's own processes: worker threads (routing, places, static maps,
// import) and child processes (the CLI, `serve` nodes) write raw V8 coverage through NODE_V8_COVERAGE, and the console
// test hands in what Chromium measured of the console's bundle. scripts/coverage-provider.mjs merges the result into
// the report vitest produces; this module does the reading and the translation.
//
// Those processes ran the sources through tsx (esbuild), vitest through Vite; the two transforms produce different
// JavaScript from the same file. Coverage counts are V8 ranges over the generated code, and the report's statements,
// functions and branches come from walking one generated code's syntax tree. So that a file keeps one set of items
// whichever process ran it, ranges measured over tsx's output are carried over to Vite's output of the same file:
// tokens that both source maps tie to the same position of the source anchor the correspondence, the tokens between
// two anchors are paired by their text, and each range becomes the stretch (or stretches, where the transforms order
// the code differently) of Vite's tokens paired with those it covers. Vitest's own conversion then counts them, item
// by item, as it counts its own processes' ranges. COVERAGE_CHECK=1 reads each file directly from the code that ran
// as well and compares the two readings.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TraceMap, decodedMappings } from '@jridgewell/trace-mapping';
import { mergeProcessCovs } from '@bcoe/v8-coverage';
import jsTokens from 'js-tokens';
import { consoleBundleOptions } from './console-bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * tsx's own transform, as its loader applies it to a .ts module (esbuild, then its dynamic-import rewrite, with the
 * tsconfig.json of the working directory when that covers the file). tsx keeps these in an internal chunk; the
 * exact-pinned version in package.json names them, and a later version that moves them fails here loudly.
 */
async function loadTsx() {
  const dist = join(ROOT, 'node_modules', 'tsx', 'dist');
  const wanted = { transform: null, loadTsconfig: null, isFileIncluded: null };
  for (const f of readdirSync(dist).filter((n) => /^(index|require)-[\w-]+\.mjs$/.test(n))) {
    const mod = await import(pathToFileURL(join(dist, f)).href);
    for (const v of Object.values(mod)) if (typeof v === 'function' && v.name in wanted) wanted[v.name] ??= v;
  }
  const missing = Object.keys(wanted).filter((k) => !wanted[k]);
  if (missing.length) throw new Error(`tsx's internal ${missing.join(', ')} not found in ${dist}`);
  const tsconfig = wanted.loadTsconfig(undefined);
  return async (file) => {
    const source = readFileSync(file, 'utf8');
    const variants = [];
    for (const raw of [tsconfig && wanted.isFileIncluded(tsconfig, file) ? tsconfig.config : undefined, undefined]) {
      const r = await wanted.transform(source, file, { tsconfigRaw: raw });
      variants.push({ code: r.code, map: r.map });
      if (raw === undefined) break;
    }
    return variants;
  };
}

/**
 * Reads every raw profile in `dir`: Node's (coverage-*.json, written by a thread or process as it ends) and the
 * browser's (browser-*.json, see test/setup/browser-coverage.ts). Keeps scripts of this repository whose generated
 * code can be rebuilt exactly, grouped by that code (several processes that ran the same code merge into one).
 * Returns { scripts: [{ url, source, code, map, functions }], bundles: [{ url, code, functions }], unmapped: [reason],
 * cut: [profile cut short], profiles: count }.
 */
export async function readProfiles(dir, { isIncluded }) {
  const names = await readdir(dir).catch((e) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  const rootUrl = pathToFileURL(ROOT).href + '/';
  const groups = new Map(); // url + fingerprint of the generated code -> { url, smc, kind, covs: [] }
  const unmapped = [];
  const cut = [];
  for (const name of names.sort()) {
    const text = readFileSync(join(dir, name), 'utf8');
    if (!text.includes(rootUrl) && !name.startsWith('browser-')) continue; // npm, tsx's loader thread and the like
    let profile;
    try {
      profile = JSON.parse(text);
    } catch (e) {
      // A thread still writing its profile when its process ended (a fork's worker at teardown) leaves it cut
      // short: reported beside the summary, not counted.
      if (!(e instanceof SyntaxError)) throw e;
      cut.push(`${name} (${text.length} bytes: ${e.message})`);
      continue;
    }
    if (name.startsWith('browser-')) {
      for (const entry of profile.result) {
        const key = `browser ${entry.url} ${createHash('sha256').update(entry.source).digest('hex')}`;
        const g = groups.get(key) ?? { kind: 'bundle', url: entry.url, source: entry.source, covs: [] };
        g.covs.push({ result: [{ scriptId: '0', url: entry.url, functions: entry.functions }] });
        groups.set(key, g);
      }
      continue;
    }
    const smcs = profile['source-map-cache'] ?? {};
    for (const script of profile.result) {
      if (!script.url.startsWith(rootUrl) || script.url.includes('/node_modules/')) continue;
      const path = fileURLToPath(script.url);
      const smc = smcs[script.url];
      if (isIncluded(path)) {
        if (!smc) {
          unmapped.push(`${path}: no source map recorded (loaded without tsx?)`);
          continue;
        }
      } else if (!smc || !smc.data?.sources?.some((s) => isIncluded(fileURLToPath(new URL(s, script.url))))) continue;
      const key = `${script.url} ${smc.data.mappings.length} ${createHash('sha256').update(smc.data.mappings).digest('hex')}`;
      const g = groups.get(key) ?? { kind: path.endsWith('.ts') ? 'tsx' : 'js', url: script.url, smc, covs: [] };
      g.covs.push({ result: [{ ...script, scriptId: '0' }] });
      groups.set(key, g);
    }
  }

  const tsx = await loadTsx();
  const scripts = [];
  const bundles = [];
  for (const g of groups.values()) {
    const merged = mergeProcessCovs(g.covs).result[0];
    if (g.kind === 'bundle') {
      if (!/\/console\/assets\/console-[0-9a-f]+\.js$/.test(new URL(g.url).pathname)) continue;
      bundles.push({ url: g.url, code: g.source, functions: merged.functions });
      continue;
    }
    const path = fileURLToPath(g.url);
    // The code as it ran: rebuilt, then checked against what the process recorded (its source map and line lengths).
    if (!existsSync(path)) {
      unmapped.push(`${path}: gone since it ran`);
      continue;
    }
    const candidates = g.kind === 'tsx' ? await tsx(path) : [{ code: readFileSync(path, 'utf8'), map: g.smc.data }];
    const found = candidates.find(
      (c) => c.map.mappings === g.smc.data.mappings && sameLines(c.code, g.smc.lineLengths),
    );
    if (!found) {
      unmapped.push(`${path}: changed after it ran (its code no longer matches what the process recorded)`);
      continue;
    }
    const sources = g.smc.data.sources.map((s) => new URL(s, g.url).href);
    if (sources.length !== 1) {
      unmapped.push(`${path}: a bundle of ${sources.length} sources`);
      continue;
    }
    const map = { ...g.smc.data, sources };
    scripts.push({ url: g.url, source: sources[0], code: found.code, map, functions: merged.functions });
  }
  return { scripts, bundles, unmapped, cut, profiles: names.length };
}

/** Whether `code` has the recorded line lengths (a process's record may end with tsx's inline source-map line). */
function sameLines(code, lineLengths) {
  const lines = code.split('\n').map((l) => l.length);
  if (lines.length > lineLengths.length) return false;
  return lines.every((n, i) => n === lineLengths[i]);
}

/** The code's tokens (comments and white space left out): [start, end, text]. */
function tokens(code) {
  const out = [];
  let at = 0;
  for (const t of jsTokens(code)) {
    const end = at + t.value.length;
    if (!/^(WhiteSpace|LineTerminatorSequence|MultiLineComment|SingleLineComment|HashbangComment)$/.test(t.type))
      out.push([at, end, t.value]);
    at = end;
  }
  return out;
}

/** Index of the bracket closing the one at `i` (the last token when unbalanced). */
function closing(toks, i) {
  let depth = 0;
  for (let k = i; k < toks.length; k++) {
    const v = toks[k][2];
    if (v === '(' || v === '[' || v === '{') depth++;
    else if ((v === ')' || v === ']' || v === '}') && --depth === 0) return k;
  }
  return toks.length - 1;
}

/**
 * Tokens one transform adds around the source's own, which must not be paired with the other code's tokens of the
 * same text: tsx's function naming (its `__name` helper, `__name(f, "f")`, `static { __name(this, "C") }`) and
 * Vite's module wiring (`(0, __vite_ssr_import_0__.f)`, `__vite_ssr_import_0__.x`, the import and export statements
 * it puts first).
 */
function added(toks) {
  const out = new Uint8Array(toks.length);
  const mark = (from, to) => out.fill(1, from, to + 1);
  const text = (k) => toks[k]?.[2];
  const semicolonAfter = (k) => (text(k + 1) === ';' ? k + 1 : k);
  for (let i = 0; i < toks.length; i++) {
    const v = text(i);
    if (v === 'var' && /^__/.test(text(i + 1))) {
      // tsx's helpers: `var __defProp = ...;` `var __name = (target, value) => ...;`
      let k = i;
      while (k < toks.length && text(k) !== ';') k = /^[([{]$/.test(text(k)) ? closing(toks, k) + 1 : k + 1;
      mark(i, k);
    } else if (v === 'static' && text(i + 1) === '{' && text(i + 2) === '__name') {
      mark(i, closing(toks, i + 1));
    } else if (v === '__name' && text(i + 1) === '(') {
      const close = closing(toks, i + 1);
      if (text(i + 3) === ',' && close === i + 5) {
        mark(i, semicolonAfter(close)); // `__name(f, "f");`
      } else {
        mark(i, i + 1); // `__name(` ... `, "f")`
        mark(close - 2, close);
      }
    } else if (v === 'const' && /^__vite_ssr_/.test(text(i + 1))) {
      let k = i;
      while (k < toks.length && text(k) !== ';' && !(k > i && text(k) === 'const')) k++;
      mark(i, text(k) === ';' ? k : k - 1);
    } else if (/^__vite_ssr_export/.test(v) && text(i + 1) === '(') {
      mark(i, semicolonAfter(closing(toks, i + 1)));
    } else if (v === '(' && text(i + 1) === '0' && text(i + 2) === ',' && /^__vite_ssr_/.test(text(i + 3))) {
      mark(i, i + 4); // `(0, __vite_ssr_import_0__.` ... `)`
      mark(closing(toks, i), closing(toks, i));
      i += 4;
    } else if (/^__vite_ssr_/.test(v)) {
      mark(i, text(i + 1) === '.' ? i + 1 : i);
    }
  }
  return out;
}

/** For each token, the position of the source a segment of `map` ties its start to (as a number), or -1. */
function sourcePositions(code, toks, map, sourceUrl) {
  const tm = new TraceMap(map);
  const index = tm.resolvedSources.findIndex((s) => s === sourceUrl || pathToFileURL(s).href === sourceUrl);
  const lineStart = [0];
  for (let i = 0; i < code.length; i++) if (code.charCodeAt(i) === 10) lineStart.push(i + 1);
  const at = new Map();
  decodedMappings(tm).forEach((segs, line) => {
    for (const s of segs) if (s.length >= 4 && s[1] === index) at.set(lineStart[line] + s[0], s[2] * 1e6 + s[3]);
  });
  return toks.map(([start]) => at.get(start) ?? -1);
}

/**
 * Pairs of token indexes (a, b) with the same text that keep their order: a longest such sequence, its ties settled
 * towards the start of the stretch (Vite's code adds parentheses around a lone arrow parameter, `f((x) => ...)` where
 * tsx's has `f(x=>...)`: the call's parenthesis is the first one on both sides). Tokens either transform added
 * (`added`) pair with none.
 */
function alignByText(ta, tb, a0, a1, b0, b1, same) {
  const n = a1 - a0;
  const m = b1 - b0;
  if (n === 0 || m === 0 || n * m > 4e6) return [];
  // dp[i][j]: the longest common subsequence of the tokens from i and from j on.
  const w = m + 1;
  const dp = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      dp[i * w + j] = same(a0 + i, b0 + j)
        ? dp[(i + 1) * w + j + 1] + 1
        : Math.max(dp[(i + 1) * w + j], dp[i * w + j + 1]);
  const pairs = [];
  for (let i = 0, j = 0; i < n && j < m;) {
    if (same(a0 + i, b0 + j)) pairs.push([a0 + i++, b0 + j++]);
    else if (dp[(i + 1) * w + j] >= dp[i * w + j + 1]) i++;
    else j++;
  }
  return pairs;
}

/**
 * A translator of ranges over `from.code` into ranges over `to.code`, both generated from the source at `sourceUrl`
 * (each with its source map): `ranges(start, end)` gives the ranges over `to.code` that cover what [start, end)
 * covers, usually one; more where the transforms order the code differently (esbuild puts a constructor with
 * parameter properties before the class's fields, Vite after them).
 */
export function translator(from, to, sourceUrl) {
  const ta = tokens(from.code);
  const tb = tokens(to.code);
  const pa = sourcePositions(from.code, ta, from.map, sourceUrl);
  const pb = sourcePositions(to.code, tb, to.map, sourceUrl);
  const xa = added(ta);
  const xb = added(tb);
  const toB = new Int32Array(ta.length).fill(-1);
  const toA = new Int32Array(tb.length).fill(-1);
  const pair = (i, j) => {
    toB[i] = j;
    toA[j] = i;
  };
  // Anchors: a source position that exactly one token of each side starts at, with the same text (in whatever order).
  const once = (ps, x) => {
    const seen = new Map();
    ps.forEach((p, i) => p >= 0 && !x[i] && seen.set(p, seen.has(p) ? -1 : i));
    return seen;
  };
  const ub = once(pb, xb);
  const anchors = [];
  for (const [p, i] of once(pa, xa)) {
    const j = ub.get(p);
    if (i >= 0 && j !== undefined && j >= 0 && ta[i][2] === tb[j][2]) anchors.push([i, j]);
  }
  anchors.sort((x, y) => x[0] - y[0]);
  for (const [i, j] of anchors) pair(i, j);
  // Between two anchors that follow each other on both sides, the other tokens of the same text, in order.
  const free = (i, j) => toB[i] < 0 && toA[j] < 0;
  let prev = [-1, -1];
  for (const next of [...anchors, [ta.length, tb.length]]) {
    if (next[1] > prev[1]) {
      const pairs = alignByText(
        ta,
        tb,
        prev[0] + 1,
        next[0],
        prev[1] + 1,
        next[1],
        (i, j) =>
          free(i, j) && !xa[i] && !xb[j] && ta[i][2] === tb[j][2] && (pa[i] < 0 || pb[j] < 0 || pa[i] === pb[j]),
      );
      for (const [i, j] of pairs) pair(i, j);
    }
    prev = next;
  }
  // How many paired tokens `to` has before each of its tokens.
  const pairedBefore = new Int32Array(tb.length + 1);
  for (let j = 0; j < tb.length; j++) pairedBefore[j + 1] = pairedBefore[j] + (toA[j] >= 0 ? 1 : 0);
  const startOf = (j) => (j < tb.length ? tb[j][0] : to.code.length);
  // Tokens of `to` without a counterpart, up to a statement's edge: what Vite adds in front of a token,
  // `(0, imported.f)(...)` for `f(...)`, goes with that token; the statements it adds do not.
  const loose = (j) => j >= 0 && j < tb.length && toA[j] < 0 && !/^[;{}]$/.test(tb[j][2]);
  const after = (j) => {
    while (loose(j - 1)) j--;
    return startOf(j);
  };
  const until = (j) => {
    while (loose(j)) j++;
    return startOf(j);
  };
  const starts = ta.map((t) => t[0]);
  const firstAtOrAfter = (offset) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return {
    anchors: anchors.length,
    paired: pairedBefore[tb.length],
    tokens: ta.length,
    ranges(start, end) {
      if (start <= 0 && end >= from.code.length) return [[0, to.code.length]];
      const first = firstAtOrAfter(start);
      const last = firstAtOrAfter(end) - 1;
      const js = [];
      let lastPaired = -1;
      for (let i = first; i <= last; i++) {
        if (toB[i] < 0) continue;
        js.push(toB[i]);
        lastPaired = toB[i];
      }
      if (js.length === 0) {
        // Code tsx added (its `__name` helper, a class's naming block) has no counterpart at all.
        let own = false;
        for (let i = first; i <= last && !own; i++) own = !xa[i];
        if (!own) return [];
        // Other tokens without a counterpart (`void 0` where Vite says `undefined`): what lies between the
        // counterparts of the tokens around them.
        let before = first - 1;
        while (before >= 0 && toB[before] < 0) before--;
        let beyond = last + 1;
        while (beyond < ta.length && toB[beyond] < 0) beyond++;
        const from_ = before >= 0 ? startOf(toB[before] + 1) : 0;
        const to_ = beyond < ta.length ? startOf(toB[beyond]) : to.code.length;
        return from_ < to_ ? [[from_, to_]] : [];
      }
      js.sort((x, y) => x - y);
      const out = [];
      let runStart = js[0];
      for (let k = 1; k <= js.length; k++) {
        // A run ends where a token paired with code outside the range lies between two of the range's own.
        if (k < js.length && pairedBefore[js[k]] - pairedBefore[js[k - 1] + 1] === 0) continue;
        const runEnd = js[k - 1];
        let endOffset = tb[runEnd][1];
        // A range whose last token has no counterpart ends before the next paired token instead.
        if (toB[last] < 0 && runEnd === lastPaired) endOffset = until(runEnd + 1);
        // The run begins right after the paired token before it (taking in what Vite adds in front, see `after`),
        // unless the token before its own counterpart has none and lies outside the range (`void 0 : x`, `undefined
        // : x`: `undefined` goes with `void 0`, not with the range that starts at the colon).
        let before = toA[runStart] - 1;
        while (before >= 0 && xa[before]) before--; // what tsx adds (its function naming) is neither
        const lead = before < 0 || before >= first || toB[before] >= 0;
        out.push([lead ? after(runStart) : tb[runStart][0], endOffset]);
        runStart = js[k];
      }
      return out;
    },
  };
}

/** The V8 function coverage of `functions`, measured over one code, as ranges over another (see translator). */
export function translateFunctions(functions, t) {
  return functions.map((f) => ({
    ...f,
    ranges: f.ranges.flatMap((r) =>
      t
        .ranges(r.startOffset, r.endOffset)
        .map(([startOffset, endOffset]) => ({ startOffset, endOffset, count: r.count })),
    ),
  }));
}

/**
 * The console's bundle as scripts/build-console.mjs builds it, with the source map that build does not ship; `served`
 * is the bundle the browser ran, whose MapLibre import path this build takes over. Undefined when the two differ.
 */
async function consoleBundle(served) {
  const { build } = await import('esbuild');
  const maplibre = /\/console\/assets\/maplibre-[0-9a-f]+\/maplibre-gl\.mjs/.exec(served)?.[0];
  if (!maplibre) return undefined;
  const result = await build({
    ...consoleBundleOptions(ROOT, maplibre),
    absWorkingDir: ROOT,
    sourcemap: 'external',
    outdir: join(ROOT, 'dist', 'console', 'assets'),
  });

  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'));
  if (js.text !== served) return undefined;
  const parsed = JSON.parse(map.text);
  parsed.sources = parsed.sources.map((s) => pathToFileURL(join(dirname(map.path), s)).href);
  return { code: js.text, map: parsed };
}

/**
 * A coverage provider extending vitest's V8 one (`V8CoverageProvider`, the class @vitest/coverage-v8 instantiates)
 * with the raw profiles the forks' threads, children and browser pages leave in a folder, whose path it hands to the
 * forks in the environment variable `envName`.
 */
export function widenedProvider(V8CoverageProvider, envName) {
  class WidenedCoverageProvider extends V8CoverageProvider {
    initialize(ctx) {
      super.initialize(ctx);
      // vitest's forks load the provider the resolved options name: this module's, not the plain V8 one.
      this.options.provider = 'custom';
      this.processesDirectory = join(this.coverageFilesDirectory, 'processes');
      process.env[envName] = this.processesDirectory;
    }

    async generateCoverage(options) {
      const started = performance.now();
      const widened = await this.processesCoverage();
      const took = performance.now() - started;
      this.widenedFiles = widened.map.files();
      const map = await super.generateCoverage(options);
      if (widened.check) this.writeForksOnly(map, widened.map);
      map.merge(widened.map);
      this.ctx.logger.log(
        `Coverage of worker threads, child processes and the browser: ${widened.profiles} profiles, ` +
          `${widened.files} files merged in ${(took / 1000).toFixed(1)} s` +
          (widened.check ? ` (${(widened.check.took / 1000).toFixed(1)} s of it the translation check)` : ''),
      );
      if (widened.cut.length) {
        this.ctx.logger.log(
          `Left out, cut short while being written: ${widened.cut.length} profile(s)\n  ${widened.cut.join('\n  ')}`,
        );
      }
      if (widened.unmapped.length) {
        process.exitCode = 1;
        this.ctx.logger.error(
          `ERROR: coverage these processes measured could not be mapped to the sources:\n  ${widened.unmapped.join('\n  ')}`,
        );
      }
      return map;
    }

    /**
     * With COVERAGE_CHECK=1, coverage-forks-only.json beside the report: what vitest's forks alone measured (the
     * files only other processes ran at zero), per file and in total, for comparison.
     */
    writeForksOnly(forks, widened) {
      const only = this.createCoverageMap();
      only.merge(JSON.parse(JSON.stringify(forks.toJSON())));
      for (const file of widened.files()) {
        if (only.files().includes(file)) continue;
        const zero = JSON.parse(JSON.stringify(widened.fileCoverageFor(file).toJSON()));
        for (const k of Object.keys(zero.s)) zero.s[k] = 0;
        for (const k of Object.keys(zero.f)) zero.f[k] = 0;
        for (const k of Object.keys(zero.b)) zero.b[k] = zero.b[k].map(() => 0);
        only.merge({ [file]: zero });
      }
      const files = Object.fromEntries(only.files().map((f) => [f, only.fileCoverageFor(f).toSummary().toJSON()]));
      const out = { total: only.getCoverageSummary().toJSON(), ...files };
      mkdirSync(this.options.reportsDirectory, { recursive: true });
      writeFileSync(join(this.options.reportsDirectory, 'coverage-forks-only.json'), JSON.stringify(out));
    }

    // Files the other processes cover are converted here, not again as files no test loaded.
    async getUntestedFiles(testedFiles) {
      return super.getUntestedFiles([...testedFiles, ...(this.widenedFiles ?? [])]);
    }

    async processesCoverage() {
      const isIncluded = (path) => this.isIncluded(path);
      const { scripts, bundles, unmapped, cut, profiles } = await readProfiles(this.processesDirectory, { isIncluded });
      const map = this.createCoverageMap();
      const transform = this.createUncoveredFileTransformer(this.ctx);
      // COVERAGE_CHECK=1: each carried-over file is also read directly from the code that ran, and the items both
      // readings hold (same place in the source) are compared: they must agree on what ran.
      const check = process.env.COVERAGE_CHECK === '1' ? { items: 0, compared: 0, differ: [], took: 0 } : undefined;
      for (const s of scripts) {
        // The code vitest's conversion reads for this file (the same Vite transform its forks ran).
        const target = await this.getSources(s.source, transform);
        if (!target.map) {
          unmapped.push(`${fileURLToPath(s.source)}: Vite gave no source map`);
          continue;
        }
        const t = translator({ code: s.code, map: s.map }, target, s.source);
        const carried = await this.remapCoverage(s.source, 0, target, translateFunctions(s.functions, t));
        if (check) {
          const checking = performance.now();
          const file = fileURLToPath(s.source);
          const direct = await this.remapCoverage(s.source, 0, { code: s.code, map: s.map }, s.functions);
          compareCoverage(direct[file], carried[file], check);
          check.took += performance.now() - checking;
        }
        map.merge(carried);
      }
      if (check) {
        const differ = check.differ.length;
        this.ctx.logger.log(
          `Translation check: of ${check.items} statements, functions and branches carried over, ${check.compared} ` +
            `found in both readings, ` +
            `${differ} covered in one only${differ ? `:\n  ${check.differ.slice(0, 20).join('\n  ')}` : ''}`,
        );
      }
      const builds = new Map();
      for (const b of bundles) {
        if (!builds.has(b.code)) builds.set(b.code, await consoleBundle(b.code));
        const built = builds.get(b.code);
        if (!built) {
          unmapped.push(`${b.url}: not the bundle scripts/build-console.mjs builds from console/ now`);
          continue;
        }
        const url = pathToFileURL(join(ROOT, 'dist', 'console', 'assets', basename(new URL(b.url).pathname))).href;
        const data = await this.remapCoverage(url, 0, built, b.functions);
        for (const file of Object.keys(data)) if (!isIncluded(file)) delete data[file];
        map.merge(data);
      }
      return { map, unmapped, cut, profiles, files: map.files().length, check };
    }
  }
  return new WidenedCoverageProvider();
}

/** Counts into `check` the items `a` and `b` (two readings of one file) both hold, and those one only covers. */
function compareCoverage(a, b, check) {
  const key = (l) => `${l.start.line}:${l.start.column}-${l.end.line}:${l.end.column}`;
  const kinds = [
    ['statement', 'statementMap', 's', key, (c) => c > 0],
    ['function', 'fnMap', 'f', (f) => key(f.loc), (c) => c > 0],
    ['branch', 'branchMap', 'b', (b) => b.type + b.locations.map(key).join(), (c) => c.map((n) => n > 0).join()],
  ];
  for (const [kind, mapName, hits, keyOf, covered] of kinds) {
    check.items += Object.keys(b[mapName]).length;
    const inA = new Map(Object.entries(a[mapName]).map(([id, item]) => [keyOf(item), id]));
    for (const [id, item] of Object.entries(b[mapName])) {
      const idA = inA.get(keyOf(item));
      if (idA === undefined) continue;
      check.compared++;
      if (covered(a[hits][idA]) !== covered(b[hits][id]))
        check.differ.push(`${a.path}: ${kind} at ${keyOf(item)} (${a[hits][idA]} / ${b[hits][id]})`);
    }
  }
}
