import { maneuversBytesMax, routerManeuversBytesMax, writeManeuvers, writeRouterManeuvers } from './maneuver-json.js';
import type { RoadGraph } from '../road-graph.js';
import { routeLine, type Overview } from './overview.js';
import { lineBytesMax, writeLine } from './line-json.js';
import type { RoutePath } from '../query/path.js';
import type { EnginePath, Maneuver } from '../types.js';

/**
 * Paths as the answer sends them. A long route's answer is hundreds of KB of coordinates; kept as JS strings and
 * objects, the HTTP thread serialised each route again for the cache, scanned it again for the envelope, and
 * encoded it to UTF-8 twice more (for the hot tier and for the socket): ~3 ms of event-loop time per long route
 * at 100 copies, ~10 ms at 600. An EnginePath carries the bytes of its route object instead, written once where the
 * path is (the routing thread, or an upstream adapter), and every later step copies bytes.
 */

const POLYLINE_OPEN = '"{\\"type\\":\\"LineString\\",\\"coordinates\\":';
const POLYLINE_CLOSE = '}"';
const MANEUVERS_KEY = ',"maneuvers":';

/** Scratch the record is written into before it is copied out at its exact size; grown to the longest so far. */
let scratch = Buffer.allocUnsafe(1 << 16);
let view = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);

function build(
  label: string,
  distanceM: number,
  durationS: number,
  lineMax: number,
  line: (buf: Buffer, view: DataView, at: number) => number,
  maneuvers: Maneuver[] | undefined,
  router = false,
): EnginePath {
  const head =
    `{"label":${JSON.stringify(label)},"distance_meters":${Math.round(distanceM)},` +
    `"duration_seconds":${Math.round(durationS)},"polyline":${POLYLINE_OPEN}`;
  const size =
    Buffer.byteLength(head) +
    lineMax +
    POLYLINE_CLOSE.length +
    (maneuvers
      ? MANEUVERS_KEY.length + (router ? routerManeuversBytesMax(maneuvers) : maneuversBytesMax(maneuvers))
      : 0) +
    1;
  if (scratch.length < size) {
    scratch = Buffer.allocUnsafe(Math.max(size, 2 * scratch.length));
    view = new DataView(scratch.buffer, scratch.byteOffset, scratch.length);
  }
  const coordsStart = scratch.write(head, 0, 'utf8');
  const coordsEnd = line(scratch, view, coordsStart);
  const polylineEnd = coordsEnd + scratch.write(POLYLINE_CLOSE, coordsEnd, 'latin1');
  let end = polylineEnd;
  if (maneuvers) {
    end += scratch.write(MANEUVERS_KEY, end, 'latin1');
    end = (router ? writeRouterManeuvers : writeManeuvers)(scratch, end, maneuvers);
  }
  scratch[end++] = 0x7d; // }
  return {
    label,
    distance_m: distanceM,
    duration_s: durationS,
    json: new Uint8Array(scratch.subarray(0, end)), // a copy at its exact size: the scratch is reused
    polylineAt: [coordsStart - POLYLINE_OPEN.length, polylineEnd],
    coordsAt: [coordsStart, coordsEnd],
    ...(maneuvers ? { maneuversAt: [polylineEnd + MANEUVERS_KEY.length, end - 1] as [number, number] } : {}),
  };
}

/**
 * A path of the built-in router: its line (the overview asked for) is written straight from the graph's points, its
 * maneuvers (maneuvers.ts) by the writer for their one shape.
 */
export function pathRecord(
  g: RoadGraph,
  p: RoutePath,
  label: string,
  overview: Overview,
  maneuvers?: Maneuver[],
): EnginePath {
  const { pts, count, keep } = routeLine(g, p, overview);
  const write = (buf: Buffer, v: DataView, at: number) => writeLine(pts, count, buf, v, at, keep);
  return build(label, p.distM, p.ms / 1000, lineBytesMax(count), write, maneuvers, true);
}

/**
 * A path from its parts (upstream engines): `line` is the JSON text of the coordinates array, `[[lng,lat],...]`,
 * numbers only, as JSON.stringify writes an array of coordinate pairs.
 */
export function enginePath(parts: {
  label: string;
  line: string;
  distance_m: number;
  duration_s: number;
  maneuvers?: Maneuver[];
}): EnginePath {
  const { line } = parts;
  if (line.includes('"') || line.includes('\\')) throw new Error('a route line holds numbers only');
  const write = (buf: Buffer, _v: DataView, at: number) => at + buf.write(line, at, 'latin1');
  return build(parts.label, parts.distance_m, parts.duration_s, line.length, write, parts.maneuvers);
}

const text = (p: EnginePath, [s, e]: readonly [number, number], enc: 'latin1' | 'utf8') =>
  Buffer.from(p.json.buffer, p.json.byteOffset + s, e - s).toString(enc);

/** The coordinates array's JSON text, `[[lng,lat],...]`. */
export const pathLine = (p: EnginePath): string => text(p, p.coordsAt, 'latin1');

export const pathManeuvers = (p: EnginePath): Maneuver[] | undefined =>
  p.maneuversAt ? (JSON.parse(text(p, p.maneuversAt, 'utf8')) as Maneuver[]) : undefined;

/** The polyline field's value (a JSON string holding the GeoJSON text), for the answer's top-level copy. */
export const polylineBytes = (p: EnginePath): Uint8Array => p.json.subarray(p.polylineAt[0], p.polylineAt[1]);

/**
 * One leg's paths in one buffer, as the route cache keeps them: the header's length (u32 LE), the header (JSON: the
 * engine and each path's fields but its bytes), then each path's bytes.
 */
export function encodeLeg(engine: string, paths: EnginePath[]): Buffer {
  let out: Buffer | undefined;
  // Its own ArrayBuffer (never a slice of Node's shared pool), as the route cache keeps it.
  writeLeg(engine, paths, (len) => (out = Buffer.allocUnsafeSlow(len)));
  return out!;
}

/** encodeLeg() into the bytes `into` gives for its length (a routing thread's answer slab, answer-slab.ts). */
export function writeLeg(engine: string, paths: EnginePath[], into: (len: number) => Uint8Array): void {
  const header = Buffer.from(
    JSON.stringify({ engine, paths: paths.map(({ json, ...rest }) => ({ ...rest, bytes: json.length })) }),
  );
  const out = into(4 + header.length + paths.reduce((n, p) => n + p.json.length, 0));
  new DataView(out.buffer, out.byteOffset, 4).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = 4 + header.length;
  for (const p of paths) {
    out.set(p.json, at);
    at += p.json.length;
  }
}

/** The leg encodeLeg() wrote (paths are views of `buf`), or undefined when `buf` is not one. */
export function decodeLeg(buf: Buffer): { engine: string; paths: EnginePath[] } | undefined {
  if (buf.length < 4) return undefined;
  const n = buf.readUInt32LE(0);
  if (4 + n > buf.length) return undefined;
  let h: { engine?: unknown; paths?: unknown } | null;
  try {
    h = JSON.parse(buf.toString('utf8', 4, 4 + n)) as typeof h;
  } catch (e) {
    if (e instanceof SyntaxError) return undefined; // a header that is not JSON: not a leg
    throw e;
  }
  const heads = h?.paths;
  if (typeof h?.engine !== 'string' || !Array.isArray(heads)) return undefined;
  if (!heads.every((p) => typeof (p as { bytes?: unknown } | null)?.bytes === 'number')) return undefined;
  let at = 4 + n;
  const paths = (heads as (Omit<EnginePath, 'json'> & { bytes: number })[]).map(({ bytes, ...rest }): EnginePath => {
    const json = buf.subarray(at, (at += bytes));
    return { ...rest, json };
  });
  return at === buf.length ? { engine: h.engine, paths } : undefined;
}
