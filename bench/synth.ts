/**
 * The synthetic country the scale benchmarks share: built once with ../shared/tools/synth-country.mjs (needs Debian
 * osmium-tool) into $TMPDIR/svcmaps-bench-import/country-N.osm.pbf and reused, with the layout JSON it writes beside
 * it; and one import stage run in its own process (bench/import-scale.ts --child), so its peak RSS is its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { haversineMeters, type LatLng } from '../src/core/geo.js';

const HERE = import.meta.dirname;

/** `<pbf>.layout.json`: where each copy lies and sample road points of the base extract (add offsets[k]). */
export interface Layout {
  copies: number;
  cols: number;
  W: number;
  H: number;
  lon0: number;
  lat0: number;
  offsets: Array<[number, number]>;
  roadSamples: Array<[number, number]>;
}

/** The country of `copies` copies, built unless already there; exits with one line when osmium is missing. */
export function syntheticCountry(copies: number): string {
  const dir = join(tmpdir(), 'svcmaps-bench-import');
  mkdirSync(dir, { recursive: true });
  const pbf = join(dir, `country-${copies}.osm.pbf`);
  // The layout is written last, so it marks a complete build (an interrupted one is rebuilt).
  if (existsSync(`${pbf}.layout.json`)) return pbf;
  if (spawnSync('osmium', ['--version'], { stdio: 'ignore' }).error) {
    process.stderr.write('bench: osmium is needed to build the synthetic country: apt-get install -y osmium-tool\n');
    process.exit(1);
  }
  const tool = join(HERE, '..', '..', 'shared', 'tools', 'synth-country.mjs');
  process.stderr.write(`building ${pbf} (${copies} copies)...\n`);
  const g = spawnSync(process.execPath, [tool, '--copies', String(copies), '--out', pbf], { stdio: 'inherit' });
  if (g.status !== 0) throw new Error(`synth-country.mjs failed: exit ${g.status}`);
  return pbf;
}

export const readLayout = (pbf: string): Layout => JSON.parse(readFileSync(`${pbf}.layout.json`, 'utf8')) as Layout;

export interface StageResult {
  seconds: number;
  peakRssMb: number;
  counts: Record<string, number>;
}

/** One import stage (render, roads, places) of `pbf` into `dataDir`, in its own process; undefined if it failed. */
export function importStage(stage: string, pbf: string, dataDir: string, memoryBytes: number): StageResult | undefined {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(HERE, 'import-scale.ts'), '--child', stage, pbf, dataDir, String(memoryBytes)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
  );
  if (r.status !== 0) {
    process.stderr.write(`import stage ${stage} failed: exit ${r.status ?? r.signal}\n`);
    return undefined;
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as StageResult;
}

/**
 * Distinct seeded route ends in the synthetic country: road points (a sample road node of copy k, moved by up to
 * ~20 m), `long` between copies far apart, `local` inside one copy.
 */
export function countryPairs(layout: Layout, rnd: () => number) {
  const seen = new Set<string>();
  const pick = <T>(a: T[]) => a[Math.floor(rnd() * a.length)]!;
  const point = (k: number): LatLng => {
    const [x, y] = pick(layout.roadSamples);
    const [dx, dy] = layout.offsets[k]!;
    return { lat: y + dy + (rnd() - 0.5) * 0.0004, lng: x + dx + (rnd() - 0.5) * 0.0004 };
  };
  const distinct = (a: LatLng, b: LatLng) => {
    const key = [a.lat, a.lng, b.lat, b.lng].map((v) => v.toFixed(5)).join();
    return !seen.has(key) && !!seen.add(key);
  };
  const half = (layout.cols * layout.W) / 2; // degrees
  const k = () => Math.floor(rnd() * layout.copies);
  return {
    /** Endpoints in two copies whose offsets are at least half the country's width apart (in degrees). */
    long(): [LatLng, LatLng] {
      for (;;) {
        const a = k(),
          b = k();
        const [ax, ay] = layout.offsets[a]!,
          [bx, by] = layout.offsets[b]!;
        if (Math.hypot(ax - bx, ay - by) < half) continue;
        const p: [LatLng, LatLng] = [point(a), point(b)];
        if (distinct(...p)) return p;
      }
    },
    /** Both endpoints in one copy, 2 to 5 km apart. */
    local(): [LatLng, LatLng] {
      for (;;) {
        const c = k(),
          a = point(c);
        for (let i = 0; i < 200; i++) {
          const b = point(c),
            d = haversineMeters(a, b);
          if (d >= 2000 && d <= 5000 && distinct(a, b)) return [a, b];
        }
      }
    },
  };
}
