import { basename, join } from 'node:path';
import { createReadStream, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { createInterface } from 'node:readline';
import { placeCid } from '../places/ids.js';
import { PlacesBuilder, type NewPlace, type Segment } from '../store/places/builder.js';
import { ContextResolver } from '../places/sources/context.js';
import { classify, detailsOf, namesOf } from '../places/sources/osm-tags.js';
import { ensurePlacesDb } from '../places/load.js';
import { PLACES_FILE } from '../store/places/schema.js';
import { DEFAULT_IMPORT_MEMORY } from './node-index.js';
import { localFeed, type OsmFeed } from './osm-feed.js';
import { isGeojsonl, isPbf, type Importer, type ImportProgress } from './types.js';

type Tags = Record<string, string>;

function toPlace(
  type: string,
  id: number,
  tags: Tags,
  lat: number,
  lng: number,
  ctx: ContextResolver,
): NewPlace | undefined {
  const cls = classify(tags, type === 'way');
  if (!cls) return undefined;
  const names = namesOf(tags, cls);
  if (!names.name) return undefined;
  const c = ctx.resolve(
    lat,
    lng,
    cls.kind === 'city' || cls.kind === 'town' ? (names.name_en ?? names.name) : undefined,
  );
  return {
    cid: placeCid('osm', type, id),
    source: '',
    kind: cls.kind,
    category: cls.category,
    importance: cls.importance,
    name: names.name,
    name_en: names.name_en,
    name_ar: names.name_ar,
    altNames: names.alt,
    country: c.country,
    context_en: c.context_en,
    context_ar: c.context_ar,
    lat,
    lng,
    ...detailsOf(tags),
  };
}

/** Named places, POIs, streets and addresses from a PBF: nodes directly, ways at their middle vertex. */
async function* fromPbf(
  feed: OsmFeed,
  ctx: ContextResolver,
  signal: AbortSignal,
): AsyncGenerator<[NewPlace, Segment[]?]> {
  const ll = new Float64Array(2);
  try {
    for await (const batch of feed.entities({ node: true, way: true, relation: false })) {
      if (signal.aborted) throw new Error('aborted');
      for (const e of batch) {
        if (e.type === 'node') {
          // the read gives only nodes with tags here; every node's position is in its index
          const p = e.tags && toPlace('node', e.id, e.tags, e.lat, e.lon, ctx);
          if (p) yield [p];
        } else if (e.type === 'way' && e.tags) {
          // classify first: most ways are not places, and their nodes need not be looked up
          if (!classify(e.tags, true)) continue;
          const coords = feed.nodes();
          const pts: Array<[number, number]> = [];
          for (const r of e.refs) if (coords.lookup(r, ll)) pts.push([ll[0]!, ll[1]!]);
          if (!pts.length) continue;
          const [lat, lng] = pts[Math.floor(pts.length / 2)]!;
          const p = toPlace('way', e.id, e.tags, lat, lng, ctx);
          if (!p) continue;
          const segments: Segment[] = [];
          if (p.kind === 'street')
            for (let i = 1; i < pts.length; i++)
              segments.push([pts[i - 1]![0], pts[i - 1]![1], pts[i]![0], pts[i]![1]]);
          yield [p, segments];
        }
      }
    }
  } finally {
    feed.releaseNodes();
  }
}

/** Newline-delimited GeoJSON Features (optionally gzipped) with OSM tags as properties and `@id` = "node/123". */
async function* fromGeojsonl(
  file: string,
  ctx: ContextResolver,
  progress: ImportProgress,
  signal: AbortSignal,
  countDamaged: () => void,
): AsyncGenerator<[NewPlace]> {
  const total = statSync(file).size;
  const raw = createReadStream(file);
  let done = 0;
  raw.on('data', (c) => progress('read', (done += c.length), total));
  const lines = createInterface({ input: file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw, crlfDelay: Infinity });
  for await (const line of lines) {
    if (signal.aborted) throw new Error('aborted');
    if (!line.trim()) continue;
    let f: { geometry?: { type?: string; coordinates?: number[] }; properties?: Tags & { '@id'?: string } };
    try {
      f = JSON.parse(line) as typeof f;
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      countDamaged(); // a damaged line costs one feature, not the import (and is counted in the summary)
      continue;
    }
    const [lng, lat] = f.geometry?.type === 'Point' ? (f.geometry.coordinates ?? []) : [];
    const m = /^(node|way|relation)\/(\d+)$/.exec(f.properties?.['@id'] ?? '');
    if (!m || typeof lat !== 'number' || typeof lng !== 'number') continue;
    const p = toPlace(m[1]!, Number(m[2]), f.properties!, lat, lng, ctx);
    if (p) yield [p];
  }
}

export const placesImporter: Importer = {
  name: 'places',
  accepts: (file) => isPbf(file) || isGeojsonl(file),
  async run(file, dataDir, progress, signal, opts = {}) {
    const started = performance.now();
    const finalPath = join(dataDir, PLACES_FILE);
    await ensurePlacesDb(dataDir);
    const source = `osm:${basename(file)}`;
    const ctx = new ContextResolver(finalPath);
    const builder = new PlacesBuilder(finalPath);
    const counts: Record<string, number> = {};
    try {
      builder.carryOver(source);
      // read alone, half the budget holds node positions
      const feed =
        opts.feed ??
        (isPbf(file)
          ? localFeed(file, {
              budgetBytes: (opts.memoryBytes ?? DEFAULT_IMPORT_MEMORY) * 0.5,
              spillDir: dataDir,
              onBytes: (done, total) => progress('read', done, total),
              signal,
            })
          : undefined);
      const damaged = () => (counts.damaged_lines = (counts.damaged_lines ?? 0) + 1);
      const rows = feed ? fromPbf(feed, ctx, signal) : fromGeojsonl(file, ctx, progress, signal, damaged);
      let n = 0;
      for await (const [p, segs] of rows) {
        builder.add({ ...p, source }, segs);
        counts[p.kind] = (counts[p.kind] ?? 0) + 1;
        n++;
      }
      await opts.admit?.();
      progress('index', 1, 1);
      builder.finish([{ source, rows: n, file: basename(file) }]);
    } catch (e) {
      builder.abort();
      throw e;
    }
    return { importer: 'places', counts, seconds: (performance.now() - started) / 1000 };
  },
};
