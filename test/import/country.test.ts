import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderImporter } from '../../src/import/render-importer.js';
import { roadsImporter } from '../../src/import/roads-importer.js';
import type { Importer, ImportSummary } from '../../src/import/types.js';
import { latToY, lngToX } from '../../src/render/mercator.js';
import { BuiltinEngine } from '../../src/routing/builtin-engine.js';
import { GRAPH_FILE } from '../../src/routing/graph.js';
import { RenderStore } from '../../src/store/render/reader.js';
import { LIECHTENSTEIN_PBF } from '../helpers/fixtures.js';
import { writeSynthCountry, type SynthCountry } from '../helpers/synth-country.js';
import { pathManeuvers } from '../../src/routing/answer/route-record.js';

/**
 * The import pipeline end to end on a small synthetic country: 3 copies of the Liechtenstein fixture side by side,
 * copies 1 and 2 with every id above 2^32, joined by trunk roads, imported under a 1 MiB memory budget so the node
 * index and the way store run entirely from their spill files. Everything must come out exactly 3x the base
 * extract (plus the two links), routes must cross from the first copy to the last, and copies' labels must render.
 * (Places reads nodes through the same NodeIndex; its import is left out here because building a fresh places
 * database costs ~40 s, see places/sources.test.ts.)
 */
const COPIES = 3;
const TINY = { memoryBytes: 1 << 20 };

describe('a synthetic country, end to end (3 copies, ids above 2^32, spilled node index)', () => {
  const root = mkdtempSync(join(tmpdir(), 'svcmaps-country-'));
  const baseDir = join(root, 'base'),
    countryDir = join(root, 'country');
  let c: SynthCountry;
  const base: Record<string, ImportSummary> = {},
    country: Record<string, ImportSummary> = {};
  const run = (imp: Importer, file: string, dir: string, opts = {}) =>
    imp.run(file, dir, () => {}, new AbortController().signal, opts);

  beforeAll(async () => {
    mkdirSync(baseDir);
    mkdirSync(countryDir);
    c = await writeSynthCountry(LIECHTENSTEIN_PBF, join(root, 'country-3.osm.pbf'), COPIES);
    for (const imp of [roadsImporter, renderImporter]) {
      base[imp.name] = await run(imp, LIECHTENSTEIN_PBF, baseDir);
      country[imp.name] = await run(imp, c.file, countryDir, TINY);
    }
  }, 120_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('roads: 3x the base graph plus the links; a route crosses from the first copy to the last', () => {
    const b = base.roads!.counts,
      k = country.roads!.counts;
    expect(k.ways).toBe(COPIES * b.ways! + COPIES - 1);
    expect(k.nodes).toBe(COPIES * b.nodes!);
    expect(k.edges).toBe(COPIES * b.edges! + 2 * (COPIES - 1));
    expect(k.restrictions).toBe(COPIES * b.restrictions!);
    const e = BuiltinEngine.load(join(countryDir, GRAPH_FILE), { snapMaxMeters: 500 });
    const from = { lat: c.west[0], lng: c.west[1] },
      to = { lat: c.east[0], lng: c.east[1] + (COPIES - 1) * c.dLon };
    const r = e.routeSync(from, to, { alternatives: 0, locale: 'en' });
    expect(r.kind).toBe('ok');
    if (r.kind !== 'ok') return;
    const straight = (to.lng - from.lng) * 111_320 * Math.cos((47.1 * Math.PI) / 180);
    expect(r.paths[0]!.distance_m).toBeGreaterThan(straight);
    expect(r.paths[0]!.distance_m).toBeLessThan(2 * straight);
    const names = JSON.stringify(pathManeuvers(r.paths[0]!));
    expect(names).toContain('Link 0');
    expect(names).toContain('Link 1');
  });

  it('render: 3x the base features plus the links; the last copy draws with its labels', () => {
    const b = base.render!.counts,
      k = country.render!.counts;
    for (const layer of Object.keys(b)) {
      expect(k[layer], layer).toBe(COPIES * b[layer]! + (layer === 'road' ? COPIES - 1 : 0));
    }
    const store = RenderStore.inDataDir(countryDir);
    try {
      // the same streets and places, shifted into the last copy
      const box = (dl: number) =>
        [lngToX(9.5 + dl), latToY(47.2), lngToX(9.56 + dl), latToY(47.1)] as [number, number, number, number];
      const names = (dl: number) =>
        store
          .query(box(dl), 14, true)
          .map((f) => f.name)
          .filter(Boolean)
          .sort();
      const first = names(0);
      expect(first.length).toBeGreaterThan(20);
      expect(names((COPIES - 1) * c.dLon)).toEqual(first);
    } finally {
      store.close();
    }
    expect(readdirSync(countryDir).filter((f) => f.startsWith('.svcmaps-'))).toEqual([]); // spill files are gone
  });
});
