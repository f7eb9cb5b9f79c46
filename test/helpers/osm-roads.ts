import type { OsmRoads, RawRestriction } from '../../src/import/roads/osm-read.js';
import { classCode } from '../../src/routing/profile.js';

/**
 * Hand-made roads as the PBF reader gives them: nodes at [lat, lon], residential ways through them (node indexes),
 * way i with OSM id 100 + i and the name `names(i)`.
 */
export function osmRoads(
  nodes: Array<[number, number]>,
  ways: number[][],
  o: {
    oneway?: number[];
    kmh?: number;
    names?: (i: number) => [string, string, string, string];
    restrictions?: RawRestriction[];
  } = {},
): OsmRoads {
  const refStart = [0];
  const refs: number[] = [];
  for (const w of ways) {
    refs.push(...w);
    refStart.push(refs.length);
  }
  const n = ways.length;
  return {
    nodeIds: Float64Array.from(nodes, (_, i) => i + 1),
    lat: Float64Array.from(nodes, ([lat]) => lat),
    lon: Float64Array.from(nodes, ([, lon]) => lon),
    found: new Uint8Array(nodes.length).fill(1),
    refStart: Uint32Array.from(refStart),
    refs: Uint32Array.from(refs),
    wayCls: new Uint8Array(n).fill(classCode('residential')),
    wayOneway: o.oneway ? Int32Array.from(o.oneway) : new Int32Array(n),
    waySpeed: new Float64Array(n).fill(o.kmh ?? 30),
    wayRoundabout: new Uint8Array(n),
    wayName: Uint32Array.from(ways, (_, i) => i),
    names: ways.map((_, i) => o.names?.(i) ?? [`Road ${i}`, '', '', '']),
    wayIndexByOsmId: new Map(ways.map((_, i) => [100 + i, i])),
    restrictions: o.restrictions ?? [],
    skipped: { viaWayRestrictions: 0, badRestrictions: 0 },
  };
}
