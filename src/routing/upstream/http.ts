/**
 * JSON over global fetch with an AbortSignal timeout. Non-JSON bodies and network errors throw (the directions
 * service answers those with the degraded line); HTTP error statuses are returned so each adapter can tell
 * "no route" (unroutable, 422) from a real failure.
 */
export async function fetchJson(
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, {
    ...init,
    signal: AbortSignal.timeout(timeoutMs),
    headers: { Accept: 'application/json', ...(init.headers ?? {}) },
  });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`upstream answered ${res.status} with a non-JSON body`);
  }
  return { status: res.status, body };
}

export const trimSlash = (u: string) => u.replace(/\/+$/, '');

/** Decodes an encoded polyline (Valhalla uses precision 6, GraphHopper 5) to [lng, lat] pairs. */
export function decodePolyline(s: string, precision = 6): Array<[number, number]> {
  const f = 10 ** precision;
  const out: Array<[number, number]> = [];
  let i = 0,
    lat = 0,
    lng = 0;
  const next = () => {
    let shift = 0,
      result = 0,
      b: number;
    do {
      b = s.charCodeAt(i++) - 63;
      result |= (b & 0x1f) << shift;
      shift += 5;
    } while (b >= 0x20);
    return result & 1 ? ~(result >> 1) : result >> 1;
  };
  while (i < s.length) {
    lat += next();
    lng += next();
    out.push([lng / f, lat / f]);
  }
  return out;
}
