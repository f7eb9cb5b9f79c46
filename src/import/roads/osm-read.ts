import { carProfile, RELATION_TAG_KEYS, WAY_TAG_KEYS } from '../../routing/profile.js';
import { IdOrdinals } from '../id-ordinals.js';
import { localFeed, type OsmFeed, type OsmRelation } from '../osm-feed.js';
import { GrowF64, GrowI32, GrowU8, GrowU32 } from './grow.js';
import { indexOfSorted } from '../../core/sorted.js';

/**
 * Reads the routable part of an OSM PBF in one streaming pass (the file is never held in memory).
 *
 * A PBF stores all nodes before the ways, and only a small share of a country's nodes (typically 10-20 %) belong
 * to drivable roads, which are known only once the ways are read. Every node's position therefore goes into the
 * read's NodeIndex as it streams by (osm-feed.ts: 12 bytes a node, spilled to disk past its share of the import's
 * memory budget); the ways and relations then record the node ids routable ways reference, and once the file ends
 * those ids, sorted and unique, take their coordinates from the index in ascending order (so a spilled index is
 * read front to back). The file is decoded once, where reading it twice (ways first, then the nodes they use) cost
 * a second full decode of a country's PBF.
 */
export interface OsmRoads {
  /** Sorted unique OSM node ids referenced by routable ways; index = base node id. */
  nodeIds: Float64Array;
  lat: Float64Array;
  lon: Float64Array;
  /** 0 when pass 2 did not find the node (clipped extract): segments touching it are skipped. */
  found: Uint8Array;
  /** Way w's node indices are refs[refStart[w] .. refStart[w+1]). */
  refStart: Uint32Array;
  refs: Uint32Array;
  wayCls: Uint8Array;
  wayOneway: Int32Array;
  waySpeed: Float64Array;
  wayRoundabout: Uint8Array;
  wayName: Uint32Array;
  names: Array<[string, string, string, string]>; // [name, name:ar, name:en, ref]
  /** OSM way id -> way index (IdOrdinals: a sorted id array, no JS Map; anything with `get` in tests). */
  wayIndexByOsmId: { get(osmId: number): number | undefined };
  restrictions: RawRestriction[];
  /** Relations not read: via-way ones whose members are not one from way, via ways only, one to way; other bad ones. */
  skipped: { viaWayRestrictions: number; badRestrictions: number };
}

export interface RawRestriction {
  fromWay: number; // OSM ids
  viaNode: number; // -1 for a via-way restriction
  toWay: number;
  only: boolean;
  /** The via ways in member order (a via-way restriction). */
  viaWays?: number[];
}

export async function readOsmRoads(
  file: string,
  opts: {
    ferries: boolean;
    progress: (stage: string, done: number, total: number) => void;
    signal: AbortSignal;
    /** Bytes the node index of its own read may hold in memory before it spills to `spillDir`. */
    nodeBudgetBytes?: number;
    spillDir?: string;
    /** A read shared with other importers (parallel.ts); without it, the file is read here. */
    feed?: OsmFeed;
  },
): Promise<OsmRoads> {
  const feed =
    opts.feed ??
    localFeed(file, {
      budgetBytes: opts.nodeBudgetBytes,
      spillDir: opts.spillDir,
      onBytes: (done, total) => opts.progress('read', done, total),
      signal: opts.signal,
    });
  const rawRefs = new GrowF64();
  const refStart = new GrowU32();
  refStart.push(0);
  const cls = new GrowU8(),
    ow = new GrowI32(),
    spd = new GrowF64(),
    rb = new GrowU8(),
    nm = new GrowU32();
  const names: OsmRoads['names'] = [];
  const nameIdx = new Map<string, number>();
  const wayIndexByOsmId = new IdOrdinals();
  const restrictions: RawRestriction[] = [];
  const skipped = { viaWayRestrictions: 0, badRestrictions: 0 };
  const tags = { node: false, way: WAY_TAG_KEYS, relation: RELATION_TAG_KEYS };
  try {
    for await (const batch of feed.entities(tags)) {
      if (opts.signal.aborted) throw new Error('aborted');
      for (const it of batch) {
        if (it.type === 'way') {
          const t = it.tags ?? {};
          const p = carProfile(t, { ferries: opts.ferries });
          if (!p || it.refs.length < 2) continue;
          wayIndexByOsmId.push(it.id); // ordinal = cls.length
          for (const r of it.refs) rawRefs.push(r);
          refStart.push(rawRefs.length);
          cls.push(p.cls);
          ow.push(p.oneway);
          spd.push(p.speedKmh);
          rb.push(p.roundabout ? 1 : 0);
          const tuple: [string, string, string, string] = [
            t.name ?? '',
            t['name:ar'] ?? '',
            t['name:en'] ?? '',
            t.ref ?? '',
          ];
          const key = tuple.join('\u0000');
          let ni = nameIdx.get(key);
          if (ni === undefined) nameIdx.set(key, (ni = names.push(tuple) - 1));
          nm.push(ni);
        } else if (it.type === 'relation') {
          const r = parseRestriction(it, skipped);
          if (r) restrictions.push(r);
        }
      }
    }
    // Needed node ids: sorted, unique.
    const sorted = rawRefs.view().slice().sort();
    let u = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[u - 1]) sorted[u++] = sorted[i]!;
    const nodeIds = sorted.slice(0, u);
    const refsIdx = new Uint32Array(rawRefs.length);
    const rv = rawRefs.view();
    for (let i = 0; i < rv.length; i++) refsIdx[i] = indexOfSorted(nodeIds, rv[i]!);
    // Their coordinates, in id order; one the file does not hold (a clipped extract) stays not found.
    const lat = new Float64Array(u),
      lon = new Float64Array(u),
      found = new Uint8Array(u);
    const ll = new Float64Array(2);
    const nodes = feed.nodes();
    for (let i = 0; i < u; i++) {
      if (!nodes.lookup(nodeIds[i]!, ll)) continue;
      // the index keeps OSM's 1e-7 degree fixed point, so these are the file's own coordinates
      lat[i] = ll[0]!;
      lon[i] = ll[1]!;
      found[i] = 1;
    }
    return {
      nodeIds,
      lat,
      lon,
      found,
      refStart: refStart.view().slice(),
      refs: refsIdx,
      wayCls: cls.view().slice(),
      wayOneway: ow.view().slice(),
      waySpeed: spd.view().slice(),
      wayRoundabout: rb.view().slice(),
      wayName: nm.view().slice(),
      names,
      wayIndexByOsmId,
      restrictions,
      skipped,
    };
  } finally {
    feed.releaseNodes();
  }
}

/** `type=restriction` with from-way / via-node or via-way(s) / to-way, for cars (`restriction:motorcar`, `except`). */
function parseRestriction(it: OsmRelation, skipped: OsmRoads['skipped']): RawRestriction | undefined {
  const t = it.tags ?? {};
  if (t.type !== 'restriction') return undefined;
  const kind = t['restriction:motorcar'] ?? t.restriction;
  if (!kind || !/^(no|only)_/.test(kind)) return undefined;
  if ((t.except ?? '').split(';').some((e) => ['motorcar', 'motor_vehicle'].includes(e.trim()))) return undefined;
  const m = it.members ?? [];
  const from = m.filter((x) => x.role === 'from' && x.type === 'way');
  const to = m.filter((x) => x.role === 'to' && x.type === 'way');
  const via = m.filter((x) => x.role === 'via');
  const only = kind.startsWith('only_');
  if (via.some((v) => v.type === 'way')) {
    if (from.length !== 1 || to.length !== 1 || via.some((v) => v.type !== 'way')) {
      skipped.viaWayRestrictions++;
      return undefined;
    }
    return { fromWay: from[0]!.ref, viaNode: -1, toWay: to[0]!.ref, only, viaWays: via.map((v) => v.ref) };
  }
  if (from.length !== 1 || to.length !== 1 || via.length !== 1) {
    skipped.badRestrictions++;
    return undefined;
  }
  return { fromWay: from[0]!.ref, viaNode: via[0]!.ref, toWay: to[0]!.ref, only };
}
