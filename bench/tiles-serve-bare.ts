/**
 * Baseline for the tiles benchmark: a bare uWebSockets.js server answering GET /maps/v1/tiles/z/x/y.png with the
 * same bytes and the same response headers the app sends for a stored tile, read once from the MBTiles argv[2]
 * into memory, plus the app's other response headers (security, CORS, rate-limit, request id: captured from the app
 * by the parent and passed in BENCH_EXTRA_HEADERS) so the load generator parses responses of the same size.
 * No auth, no limits, no metering, no cache lookup: the ceiling the app is compared with.
 */
import uWS from 'uWebSockets.js';
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { announce, stopWith } from './lifecycle.js';

const file = process.argv[2];
if (!file) throw new Error('usage: tiles-serve-bare.ts <file.mbtiles>');
const db = new Database(file, { readonly: true });
const tiles = new Map<string, { body: Buffer; etag: string }>();
for (const r of db
  .prepare('SELECT zoom_level z, tile_column x, tile_row row, tile_data d FROM tiles')
  .iterate() as Iterable<{ z: number; x: number; row: number; d: Buffer }>) {
  const etag = `"${createHash('sha1').update(r.d).digest('base64url').slice(0, 22)}"`;
  tiles.set(`/maps/v1/tiles/${r.z}/${r.x}/${2 ** r.z - 1 - r.row}.png`, { body: r.d, etag });
}
db.close();

const extra = JSON.parse(process.env.BENCH_EXTRA_HEADERS ?? '[]') as Array<[string, string]>;
const app = uWS.App();
app.get('/*', (res, req) => {
  const t = tiles.get(req.getUrl());
  if (!t) return void res.writeStatus('404 Not Found').end();
  res.writeStatus('200 OK');
  res.writeHeader('Content-Type', 'image/png');
  res.writeHeader('X-Tile-Source', 'memory');
  res.writeHeader('Cache-Control', 'public, max-age=3600, stale-while-revalidate=86400');
  res.writeHeader('ETag', t.etag);
  for (const [k, v] of extra) res.writeHeader(k, v);
  res.end(t.body);
});
let sock: uWS.us_listen_socket | undefined;
stopWith(() => sock && uWS.us_listen_socket_close(sock));
app.listen('127.0.0.1', 0, (token) => {
  if (!token) throw new Error('bare server: cannot listen');
  sock = token;
  announce({ port: uWS.us_socket_local_port(token) });
});
