import { AppError } from '../../core/errors.js';
import { sniffImageType } from '../../core/image-type.js';
import { invalid, requiredCoord } from '../../core/fields.js';
import { guarded } from '../../places/guard.js';
import { DEFAULT_COUNTRY, fallbackCentre, isCountryCode } from '../../places/bias.js';
import { parsePlaceId } from '../../places/place-id.js';
import type { Services } from '../../services.js';
import { ok } from '../envelope.js';
import type { RouteContext, Router } from '../router.js';
import type { HttpReply, HttpRequest } from '../types.js';
import { jsonBody, pickLocale, queryNumber } from '../validate.js';

/** Longer input is cut, not refused: nobody types more than this into a search box. */
const MAX_QUERY_CHARS = 200;
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** The caller's country: a trusted proxy header when configured, else the default (private networks: jo). */
function callerCountry(req: HttpRequest, s: Services): string {
  const h = s.config.http.country_header;
  const v = h ? req.headers[h.toLowerCase()] : undefined;
  return isCountryCode(v) ? v.toLowerCase() : DEFAULT_COUNTRY;
}

export function register(router: Router, s: Services): void {
  const log = s.log;
  const f = s.config.features;
  const autocomplete = async (ctx: RouteContext, q: string): Promise<HttpReply> => {
    const started = performance.now();
    const lat = queryNumber(ctx.req, 'lat');
    const lng = queryNumber(ctx.req, 'lng');
    const home = callerCountry(ctx.req, s);
    const given = ctx.req.query.get('country');
    const country = isCountryCode(given) ? given.toLowerCase() : home;
    const hasBias =
      Number.isFinite(lat) &&
      Number.isFinite(lng) &&
      !(lat === 0 && lng === 0) &&
      Math.abs(lat!) <= 90 &&
      Math.abs(lng!) <= 180;
    const mw = queryNumber(ctx.req, 'max_wait_ms');
    const maxWaitMs = clamp(Number.isFinite(mw) ? mw! : s.config.places.default_max_wait_ms, 200, 10_000);
    const a = await guarded('AUTOCOMPLETE', f.autocomplete, s.pools.autocomplete, log, () =>
      s.places.autocomplete({
        q,
        country,
        maxWaitMs,
        locale: pickLocale(ctx.req),
        biasGiven: hasBias,
        bias: hasBias ? { lat: lat!, lng: lng! } : fallbackCentre(home),
        signal: ctx.req.signal,
      }),
    );
    ctx.miss = a.miss;
    return ok({
      predictions: a.predictions,
      source: a.source,
      served_in_ms: Math.round(performance.now() - started),
      budget_expired: a.budget_expired,
    });
  };
  router.add(
    {
      method: 'GET',
      pattern: '/maps/v1/autocomplete',
      surface: 'json',
      bucket: 'gather',
      // An empty query is answered at once, without an await (the pipeline then answers inside the uWS handler).
      handler: (ctx) => {
        const q = (ctx.req.query.get('q') ?? '').trim().slice(0, MAX_QUERY_CHARS);
        if (!q) return ok({ predictions: [], source: 'empty_query', served_in_ms: 0, budget_expired: false });
        return autocomplete(ctx, q);
      },
    },
    {
      method: 'POST',
      pattern: '/maps/v1/geocode',
      surface: 'json',
      bucket: 'gather',
      handler: async (ctx) => {
        const body = jsonBody(ctx.req);
        const address = body.address;
        if (address === undefined || address === null) throw invalid('address', 'is required');
        if (typeof address !== 'string') throw invalid('address', 'must be a string');
        if (!address.trim()) throw invalid('address', 'must not be empty');
        const locale = pickLocale(ctx.req, body.locale);
        const g = await guarded('GEOCODE', f.geocode, s.pools.geocode, log, () =>
          s.places.geocode(address.trim(), locale, fallbackCentre(callerCountry(ctx.req, s))),
        );
        ctx.miss = g.miss;
        const { miss: _miss, ...data } = g;
        return ok(g.matched ? data : { matched: false });
      },
    },
    {
      method: 'POST',
      pattern: '/maps/v1/reverse',
      surface: 'json',
      bucket: 'gather',
      handler: async (ctx) => {
        const body = jsonBody(ctx.req);
        const at = { lat: requiredCoord(body, 'lat', 'lat'), lng: requiredCoord(body, 'lng', 'lng') };
        const r = await guarded('REVERSE', f.reverse, s.pools.reverse, log, () =>
          s.places.reverse(at, pickLocale(ctx.req, body.locale)),
        );
        ctx.miss = r.miss;
        return ok({
          lat: at.lat,
          lng: at.lng,
          formatted_address: r.formatted_address,
          ...(r.place_id ? { place_id: r.place_id } : {}),
          source: r.source,
        });
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/place',
      surface: 'json',
      handler: () => {
        throw new AppError('MISSING_ID');
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/place/*id',
      surface: 'json',
      bucket: 'gather',
      handler: async (ctx) => {
        const id = parsePlaceId(ctx.params.id ?? '');
        const cacheOnly = ['true', '1'].includes(ctx.req.query.get('cache_only') ?? '');
        const lat = queryNumber(ctx.req, 'lat');
        const lng = queryNumber(ctx.req, 'lng');
        const lookup = {
          id,
          cacheOnly,
          locale: pickLocale(ctx.req),
          hintLat: Number.isFinite(lat) ? lat : undefined,
          hintLng: Number.isFinite(lng) ? lng : undefined,
          hintName: ctx.req.query.get('q') ?? undefined,
        };
        const p = await guarded('PLACE', f.place, s.pools.place, log, () => s.places.place(lookup));
        ctx.miss = p.miss;
        const { miss: _miss, ...record } = p;
        return ok(record);
      },
    },
    {
      method: 'GET',
      pattern: '/maps/v1/place-photos',
      surface: 'json',
      bucket: 'gather',
      handler: async (ctx) => {
        const lat = queryNumber(ctx.req, 'lat');
        const lng = queryNumber(ctx.req, 'lng');
        if (
          !Number.isFinite(lat) ||
          !Number.isFinite(lng) ||
          Math.abs(lat!) > 90 ||
          Math.abs(lng!) > 180 ||
          (lat === 0 && lng === 0)
        ) {
          throw new AppError('MISSING_COORDS');
        }
        return ok(await s.places.photos({ lat: lat!, lng: lng! }));
      },
    },
    {
      // Operator photo files (<data>/photos/<place id>/<file>): tile-family auth so <img> tags can carry ?t=.
      method: 'GET',
      pattern: '/maps/v1/place-photo-files/:id/:file',
      surface: 'tile',
      tileFamily: true,
      binary: true,
      handler: async (ctx) => {
        // Read off the event loop and capped at PHOTO_MAX_BYTES: a missing or oversized file is a 404; one that
        // cannot be read (permissions, I/O) is a 500, logged with its cause.
        const body = await s.photos.read(ctx.params.id!, ctx.params.file!);
        if (!body) throw new AppError('NOT_FOUND');
        const type = sniffImageType(body);
        if (!type) throw new AppError('NOT_FOUND');
        return { status: 200, headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' }, body };
      },
    },
  );
}
