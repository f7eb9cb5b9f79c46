import type { MapFeature } from '../../render/features.js';
import { type Box, latToY, lngToX, ringsBox } from '../../render/mercator.js';
import { classifyArea, classifyLine, classifyPoint, isAreaWay, type Classed } from './classify.js';
import { coastLand } from './coast.js';
import { orientRings } from './orient.js';
import { joinWays, type WayLine } from './rings.js';
import type { NodeIndex } from '../node-index.js';
import { localFeed, type OsmFeed } from '../osm-feed.js';
import { WayStore } from '../way-store.js';

type Tags = Record<string, string>;

export interface ReadResult {
  /** The extract's box (header bbox, else the extent of its nodes), normalised. */
  box: Box;
  /** Land polygons built from coastlines, when the extract has any. */
  coast: Float64Array[];
}

/** Memory limits of one read: the node index and the kept way geometries each get a share of the import's budget. */
export interface ReadLimits {
  nodeBudgetBytes?: number;
  wayBudgetBytes?: number;
  /** Where spill files go (the data directory). */
  spillDir?: string;
  /** A read shared with other importers (parallel.ts); without it, the file is read here. */
  feed?: OsmFeed;
}

/**
 * One streaming pass over a PBF (nodes, then ways, then relations, as PBF files are sorted). Memory is bounded by
 * design whatever the extract's size: node positions are in the read's NodeIndex (osm-feed.ts: 12 bytes a node,
 * spilled to disk past its budget), way geometries that later steps need (multipolygon members, named streets to
 * join) go into a WayStore (8 bytes a point, spilled likewise); no JS Map or Set is keyed by OSM id.
 */
export async function readOsm(
  file: string,
  emit: (f: Omit<MapFeature, 'id'>) => void,
  progress: (done: number, total: number) => void,
  signal: AbortSignal,
  limits: ReadLimits = {},
): Promise<ReadResult> {
  const feed =
    limits.feed ??
    localFeed(file, {
      budgetBytes: limits.nodeBudgetBytes,
      spillDir: limits.spillDir,
      onBytes: progress,
      signal,
    });
  let nodes: NodeIndex | undefined;
  const ways = new WayStore({ budgetBytes: limits.wayBudgetBytes, spillDir: limits.spillDir });
  const coastWays: WayLine[] = [];
  // Named streets come as many short ways; joined per (class, name) they become lines long enough to carry a label.
  // The groups hold way ordinals in the WayStore, not geometry.
  const namedRoads = new Map<string, { c: Classed; t: Tags; ords: number[] }>();

  const feature = (c: Classed, t: Tags, rings: Float64Array[]) => {
    const areal = c.layer === 'building' || c.layer === 'landuse' || c.layer === 'water';
    const rs = areal ? orientRings(rings) : rings;
    emit({ ...c, name: t.name, nameEn: t['name:en'], nameAr: t['name:ar'], rings: rs, box: ringsBox(rs) });
  };
  const point = (c: Classed, t: Tags, x: number, y: number) => feature(c, t, [Float64Array.of(x, y)]);
  const centre = (r: Float64Array): [number, number] => {
    const b = ringsBox([r]);
    return [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
  };
  const areaPoi = (t: Tags, rings: Float64Array[]) => {
    const p = t.name ? classifyPoint(t) : undefined;
    if (p && p.layer === 'poi') point(p, t, ...centre(rings[0]!));
  };
  /** A stored way as a projected line. */
  const lineOf = (ord: number): WayLine => {
    const w = ways.read(ord);
    const coords = new Float64Array(w.latLon.length);
    for (let i = 0; i < coords.length; i += 2) {
      coords[i] = lngToX(w.latLon[i + 1]!);
      coords[i + 1] = latToY(w.latLon[i]!);
    }
    return { first: w.first, last: w.last, coords };
  };

  const ll = new Float64Array(2);
  const latLon: number[] = [];
  const pts: number[] = [];
  try {
    for await (const chunk of feed.entities({ node: true, way: true, relation: true })) {
      if (signal.aborted) throw new Error('import aborted');
      for (const item of chunk) {
        if (item.type === 'node') {
          // the read gives only nodes with tags here; every node's position is in its index
          const c = item.tags && classifyPoint(item.tags);
          if (c) point(c, item.tags!, lngToX(item.lon), latToY(item.lat));
        } else if (item.type === 'way') {
          nodes ??= feed.nodes();
          pts.length = 0;
          latLon.length = 0;
          let first = -1;
          let last = -1;
          for (const ref of item.refs) {
            if (!nodes.lookup(ref, ll)) continue; // cut off by the extract
            if (first < 0) first = ref;
            last = ref;
            latLon.push(ll[0]!, ll[1]!);
            pts.push(lngToX(ll[1]!), latToY(ll[0]!));
          }
          if (pts.length < 4) continue;
          const ord = ways.add(item.id, first, last, latLon);
          const line: WayLine = { first, last, coords: Float64Array.from(pts) };
          const t = item.tags ?? {};
          if (t.natural === 'coastline') coastWays.push(line);
          const closed = first === last && item.refs[0] === item.refs[item.refs.length - 1];
          const area = isAreaWay(t, closed) ? classifyArea(t) : undefined;
          if (area) {
            feature(area, t, [line.coords]);
            areaPoi(t, [line.coords]);
            continue;
          }
          const ln = classifyLine(t);
          if (ln && ln.layer === 'road' && t.name) {
            const key = [ln.cls, t.name, t['name:en'] ?? '', t['name:ar'] ?? ''].join('\u0000');
            const group = namedRoads.get(key);
            if (group) group.ords.push(ord);
            else namedRoads.set(key, { c: ln, t, ords: [ord] });
          } else if (ln) feature(ln, t, [line.coords]);
        } else if (item.type === 'relation') {
          const t = item.tags ?? {};
          if (t.type !== 'multipolygon') continue;
          const c = classifyArea(t);
          if (!c) continue;
          const members: WayLine[] = [];
          for (const m of item.members) {
            if (m.type !== 'way') continue;
            const ord = ways.find(m.ref);
            if (ord >= 0) members.push(lineOf(ord));
          }
          const rings = joinWays(members, false)
            .filter((ch) => ch.closed)
            .map((ch) => ch.coords);
          if (!rings.length) continue;
          feature(c, t, rings);
          areaPoi(t, rings);
        }
      }
    }
    feed.releaseNodes(); // the named streets are joined from the way store
    for (const { c, t, ords } of namedRoads.values()) {
      for (const chain of joinWays(ords.map(lineOf), false)) feature(c, t, [chain.coords]);
    }
  } finally {
    feed.releaseNodes();
    ways.close();
  }
  const bb = feed.header()?.bbox;
  // the extent of every node, as Web Mercator (whose y grows southwards)
  const e = feed.extent();
  const box: Box = bb
    ? [lngToX(bb.left / 1e9), latToY(bb.top / 1e9), lngToX(bb.right / 1e9), latToY(bb.bottom / 1e9)]
    : e
      ? [lngToX(e[0]), latToY(e[3]), lngToX(e[2]), latToY(e[1])]
      : [Infinity, Infinity, -Infinity, -Infinity];
  const coast = coastWays.length ? coastLand(joinWays(coastWays, true), box) : [];
  return { box, coast };
}
