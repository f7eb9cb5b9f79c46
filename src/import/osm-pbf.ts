import { createReadStream, statSync } from 'node:fs';
import { OSMTransform } from 'osm-pbf-parser-node';

export interface OsmNode {
  type: 'node';
  id: number;
  lat: number;
  lon: number;
  tags?: Record<string, string>;
}
export interface OsmWay {
  type: 'way';
  id: number;
  refs: number[];
  tags?: Record<string, string>;
}
export interface OsmRelation {
  type: 'relation';
  id: number;
  members: Array<{ type: string; ref: number; role: string }>;
  tags?: Record<string, string>;
}
export type OsmEntity = OsmNode | OsmWay | OsmRelation;

/**
 * Streams the entities of an .osm.pbf file (block by block, never the whole file) and reports bytes read, so
 * imports can show progress. Stops early when `signal` aborts.
 */
export async function* readPbf(
  file: string,
  onBytes: (done: number, total: number) => void,
  signal?: AbortSignal,
): AsyncGenerator<OsmEntity> {
  const total = statSync(file).size;
  let done = 0;
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  input.on('data', (c) => {
    done += c.length;
    onBytes(done, total);
  });
  const parsed = input.pipe(new OSMTransform({ withInfo: false }));
  try {
    for await (const batch of parsed as AsyncIterable<Array<OsmEntity | { type?: undefined }>>) {
      if (signal?.aborted) throw new Error('aborted');
      for (const e of batch) if (e.type) yield e;
    }
  } finally {
    input.destroy();
    parsed.destroy();
  }
}

/**
 * Coordinates of every node seen, in compact typed arrays (16 bytes a node). PBF files list nodes in ascending id
 * order before any way, so lookups are a binary search; out-of-order input is sorted once on first lookup.
 */
export class NodeCoords {
  private ids = new Float64Array(1 << 16);
  private lat = new Float32Array(1 << 16);
  private lon = new Float32Array(1 << 16);
  private n = 0;
  private sorted = true;

  add(id: number, lat: number, lon: number): void {
    if (this.n === this.ids.length) this.grow();
    if (this.n > 0 && id < this.ids[this.n - 1]!) this.sorted = false;
    this.ids[this.n] = id;
    this.lat[this.n] = lat;
    this.lon[this.n] = lon;
    this.n++;
  }

  get size(): number {
    return this.n;
  }

  /** [lat, lon] or undefined when the node is not in the extract (ways clipped at its border). */
  get(id: number): [number, number] | undefined {
    if (!this.sorted) this.sort();
    let lo = 0;
    let hi = this.n - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = this.ids[mid]!;
      if (v === id) return [this.lat[mid]!, this.lon[mid]!];
      if (v < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  private grow(): void {
    const cap = this.ids.length * 2;
    const ids = new Float64Array(cap);
    ids.set(this.ids);
    this.ids = ids;
    const lat = new Float32Array(cap);
    lat.set(this.lat);
    this.lat = lat;
    const lon = new Float32Array(cap);
    lon.set(this.lon);
    this.lon = lon;
  }

  private sort(): void {
    const order = Array.from({ length: this.n }, (_, i) => i).sort((a, b) => this.ids[a]! - this.ids[b]!);
    const ids = new Float64Array(this.ids.length),
      lat = new Float32Array(this.ids.length),
      lon = new Float32Array(this.ids.length);
    order.forEach((from, to) => {
      ids[to] = this.ids[from]!;
      lat[to] = this.lat[from]!;
      lon[to] = this.lon[from]!;
    });
    [this.ids, this.lat, this.lon, this.sorted] = [ids, lat, lon, true];
  }
}
