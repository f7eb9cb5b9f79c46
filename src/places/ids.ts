import { createHash } from 'node:crypto';

/**
 * Stable place IDs: 16 hex digits of SHA-1 over (source kind, object type, object id). The same OSM object gets the
 * same ID from any extract and on every re-import; the 16-hex form passes the spec's CID shape (12-30 hex).
 */
export const placeCid = (source: 'osm' | 'geonames', type: string, id: string | number): string =>
  createHash('sha1').update(`${source}:${type}:${id}`).digest('hex').slice(0, 16);

/** `cid` as the spec shows it: the decimal form of the hex ID. */
export const cidDecimal = (hex: string): string => BigInt(`0x${hex}`).toString(10);
