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
