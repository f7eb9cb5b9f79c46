import { createReadStream, statSync } from 'node:fs';
import { OSMTransform } from 'osm-pbf-parser-node';
import type { MapFeature } from '../../render/features.js';
import { type Box, latToY, lngToX, ringsBox } from '../../render/mercator.js';
import { classifyArea, classifyLine, classifyPoint, isAreaWay, type Classed } from './classify.js';
import { coastLand } from './coast.js';
import { orientRings } from './orient.js';
import { joinWays, type WayLine } from './rings.js';
import { NodeIndex } from '../node-index.js';
import { WayStore } from '../way-store.js';

type Tags = Record<string, string>;
interface OsmNode {
  type: 'node';
  id: number;
  lat: number;
  lon: number;
  tags?: Tags;
}
interface OsmWay {
  type: 'way';
  id: number;
  refs: number[];
  tags?: Tags;
}
interface OsmRelation {
  type: 'relation';
  id: number;
  members: Array<{ type: string; ref: number; role: string }>;
  tags?: Tags;
}
interface OsmHeader {
  bbox?: { left: number; right: number; top: number; bottom: number };
}

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
}

/**
 * One streaming pass over a PBF (nodes, then ways, then relations, as PBF files are sorted). Memory is bounded by
 * design whatever the extract's size: node positions go into a NodeIndex (12 bytes a node, spilled to disk past its
 * budget), way geometries that later steps need (multipolygon members, named streets to join) into a WayStore
 * (8 bytes a point, spilled likewise); no JS Map or Set is keyed by OSM id.
 */
export async function readOsm(
  file: string,
  emit: (f: Omit<MapFeature, 'id'>) => void,
  progress: (done: number, total: number) => void,
  signal: AbortSignal,
  limits: ReadLimits = {},
): Promise<ReadResult> {
  const total = statSync(file).size;
  let done = 0;
  const nodes = new NodeIndex({ budgetBytes: limits.nodeBudgetBytes, spillDir: limits.spillDir });
  const ways = new WayStore({ budgetBytes: limits.wayBudgetBytes, spillDir: limits.spillDir });
  const coastWays: WayLine[] = [];
  // Named streets come as many short ways; joined per (class, name) they become lines long enough to carry a label.
  // The groups hold way ordinals in the WayStore, not geometry.
  const namedRoads = new Map<string, { c: Classed; t: Tags; ords: number[] }>();
  let header: OsmHeader | undefined;
  const ext: Box = [Infinity, Infinity, -Infinity, -Infinity];

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

  const stream = createReadStream(file);
  stream.on('data', (b) => {
    done += b.length;
    progress(done, total);
  });
  const parsed = stream.pipe(new OSMTransform({ withTags: true, withInfo: false }));
  const ll = new Float64Array(2);
  const latLon: number[] = [];
  const pts: number[] = [];
  try {
    for await (const chunk of parsed as AsyncIterable<Array<OsmNode | OsmWay | OsmRelation | OsmHeader>>) {
      if (signal.aborted) throw new Error('import aborted');
      for (const item of chunk) {
        if (!('type' in item)) {
          header = item;
          continue;
        }
        if (item.type === 'node') {
          nodes.add(item.id, item.lat, item.lon);
          const x = lngToX(item.lon);
          const y = latToY(item.lat);
          if (x < ext[0]) ext[0] = x;
          if (x > ext[2]) ext[2] = x;
          if (y < ext[1]) ext[1] = y;
          if (y > ext[3]) ext[3] = y;
          const c = item.tags && classifyPoint(item.tags);
          if (c) point(c, item.tags!, x, y);
        } else if (item.type === 'way') {
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
    for (const { c, t, ords } of namedRoads.values()) {
      for (const chain of joinWays(ords.map(lineOf), false)) feature(c, t, [chain.coords]);
    }
  } finally {
    stream.destroy();
    parsed.destroy();
    nodes.close();
    ways.close();
  }
  const bb = header?.bbox;
  const box: Box = bb
    ? [lngToX(bb.left / 1e9), latToY(bb.top / 1e9), lngToX(bb.right / 1e9), latToY(bb.bottom / 1e9)]
    : ext;
  const coast = coastWays.length ? coastLand(joinWays(coastWays, true), box) : [];
  return { box, coast };
}
