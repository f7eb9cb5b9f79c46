import { createReadStream, statSync } from 'node:fs';
import { OSMTransform } from 'osm-pbf-parser-node';
import type { MapFeature } from '../../render/features.js';
import { type Box, latToY, lngToX, ringsBox } from '../../render/mercator.js';
import { classifyArea, classifyLine, classifyPoint, isAreaWay, type Classed } from './classify.js';
import { coastLand } from './coast.js';
import { orientRings } from './orient.js';
import { joinWays, type WayLine } from './rings.js';

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

/**
 * One streaming pass over a PBF (nodes, then ways, then relations, as PBF files are sorted). Node positions are
 * kept in typed arrays; way geometries are kept for multipolygon and coastline assembly. Memory grows with the
 * extract: fine for a city or small country, several GB for a large country.
 */
export async function readOsm(
  file: string,
  emit: (f: Omit<MapFeature, 'id'>) => void,
  progress: (done: number, total: number) => void,
  signal: AbortSignal,
): Promise<ReadResult> {
  const total = statSync(file).size;
  let done = 0;
  const nodeIndex = new Map<number, number>();
  let coords = new Float64Array(1 << 16);
  let nNodes = 0;
  const ways = new Map<number, WayLine>();
  const coastWays: WayLine[] = [];
  // Named streets come as many short ways; joined per (class, name) they become lines long enough to carry a label.
  const namedRoads = new Map<string, { c: Classed; t: Tags; lines: WayLine[] }>();
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

  const stream = createReadStream(file);
  stream.on('data', (b) => {
    done += b.length;
    progress(done, total);
  });
  const parsed = stream.pipe(new OSMTransform({ withTags: true, withInfo: false }));
  for await (const chunk of parsed as AsyncIterable<Array<OsmNode | OsmWay | OsmRelation | OsmHeader>>) {
    if (signal.aborted) {
      stream.destroy();
      throw new Error('import aborted');
    }
    for (const item of chunk) {
      if (!('type' in item)) {
        header = item;
        continue;
      }
      if (item.type === 'node') {
        const x = lngToX(item.lon);
        const y = latToY(item.lat);
        if (nNodes * 2 + 2 > coords.length) {
          const grown = new Float64Array(coords.length * 2);
          grown.set(coords);
          coords = grown;
        }
        nodeIndex.set(item.id, nNodes);
        coords[nNodes * 2] = x;
        coords[nNodes * 2 + 1] = y;
        nNodes++;
        if (x < ext[0]) ext[0] = x;
        if (x > ext[2]) ext[2] = x;
        if (y < ext[1]) ext[1] = y;
        if (y > ext[3]) ext[3] = y;
        const c = item.tags && classifyPoint(item.tags);
        if (c) point(c, item.tags!, x, y);
      } else if (item.type === 'way') {
        const pts: number[] = [];
        let first = -1;
        let last = -1;
        for (const ref of item.refs) {
          const i = nodeIndex.get(ref);
          if (i === undefined) continue; // cut off by the extract
          if (first < 0) first = ref;
          last = ref;
          pts.push(coords[i * 2]!, coords[i * 2 + 1]!);
        }
        if (pts.length < 4) continue;
        const line: WayLine = { first, last, coords: Float64Array.from(pts) };
        ways.set(item.id, line);
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
          const group = namedRoads.get(key) ?? { c: ln, t, lines: [] };
          group.lines.push(line);
          namedRoads.set(key, group);
        } else if (ln) feature(ln, t, [line.coords]);
      } else if (item.type === 'relation') {
        const t = item.tags ?? {};
        if (t.type !== 'multipolygon') continue;
        const c = classifyArea(t);
        if (!c) continue;
        const members = item.members.filter((m) => m.type === 'way' && ways.has(m.ref));
        const rings = joinWays(
          members.map((m) => ways.get(m.ref)!),
          false,
        )
          .filter((ch) => ch.closed)
          .map((ch) => ch.coords);
        if (!rings.length) continue;
        feature(c, t, rings);
        areaPoi(t, rings);
      }
    }
  }
  for (const { c, t, lines } of namedRoads.values()) {
    for (const chain of joinWays(lines, false)) feature(c, t, [chain.coords]);
  }
  const bb = header?.bbox;
  const box: Box = bb
    ? [lngToX(bb.left / 1e9), latToY(bb.top / 1e9), lngToX(bb.right / 1e9), latToY(bb.bottom / 1e9)]
    : ext;
  const coast = coastWays.length ? coastLand(joinWays(coastWays, true), box) : [];
  return { box, coast };
}
