import { AppError } from '../core/errors.js';
import { haversineMeters, type LatLng } from '../core/geo.js';
import { normalizeText } from '../core/normalize.js';
import type { AnswerCache } from '../cache/answer-cache.js';
import { cidDecimal } from './ids.js';
import { addressOf, cacheOnlyRecord, displayName, formattedAddress } from './format.js';
import { reverse, type ReverseHit } from './reverse.js';
import { search } from './search.js';
import type { PlacesIndex } from '../store/places/index-db.js';
import type { PhotoSource } from './photos.js';
import type { PlacesThreads } from './places-threads.js';
import type {
  AutocompleteAnswer,
  AutocompleteRequest,
  Locale,
  PlaceLookup,
  PlaceRecord,
  PlacesService,
  Prediction,
} from './types.js';

const CELL = (v: number, step: number) => Math.round(v / step) * step;

/** Runs synchronous work after the current tick and races it against a budget; late work still completes. */
function withBudget<T>(ms: number, work: () => T, late: (v: T) => void): Promise<{ value: T } | undefined> {
  return new Promise((resolve) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      resolve(undefined);
    }, ms);
    setImmediate(() => {
      const value = work();
      if (expired) return late(value);
      clearTimeout(timer);
      resolve({ value });
    });
  });
}

/** Races work already under way (in a places thread) against a budget; late work still completes and is kept. */
function raceBudget<T>(ms: number, work: Promise<T>, late: (v: T) => void): Promise<{ value: T } | undefined> {
  return new Promise((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      resolve(undefined);
    }, ms);
    work.then(
      (value) => {
        if (expired) return late(value);
        clearTimeout(timer);
        resolve({ value });
      },
      (e: unknown) => {
        if (expired) return; // nobody waits for it any more
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/**
 * The built-in places engine over places.db: autocomplete, geocode, reverse, details and photos, with answers kept in
 * the hot and warm tiers (keys include the index generation, so a new import never serves stale answers).
 * With `threads`, searches and reverse lookups run in places threads (each with its own connection), also while
 * they start (see `pooled`); details and photos are single indexed reads and stay on the event loop.
 */
export class LocalPlaces implements PlacesService {
  constructor(
    private readonly index: PlacesIndex,
    private readonly cache: AnswerCache,
    private readonly photoFiles: PhotoSource,
    private readonly threads?: PlacesThreads,
  ) {}

  /**
   * The places threads, also while they still open the index: a query then waits for a thread (its max_wait_ms
   * still holds) rather than running here, where a country's index would first load its scoring columns on the
   * event loop for seconds. Only when every thread failed to start do queries run in-process.
   */
  private get pooled(): PlacesThreads | undefined {
    return this.threads?.ready || this.threads?.starting ? this.threads : undefined;
  }

  async autocomplete(r: AutocompleteRequest): Promise<AutocompleteAnswer> {
    const biasGiven = r.biasGiven;
    const key = `ac|${this.index.generation}|${r.locale}|${r.country}|${CELL(r.bias.lat, 0.01)},${CELL(r.bias.lng, 0.01)}|${normalizeText(r.q)}`;
    const hit = this.cache.get<Prediction[]>(key);
    const withDistance = (ps: Prediction[]) =>
      ps.map(({ distance_meters: _d, ...p }) => {
        const d =
          biasGiven && p.lat !== undefined ? Math.round(haversineMeters(r.bias, { lat: p.lat, lng: p.lng! })) : 0;
        return d > 0 ? { ...p, distance_meters: d } : p;
      });
    if (hit) return { predictions: withDistance(hit.value), source: hit.tier, budget_expired: false, miss: false };
    const input = { q: r.q, bias: r.bias, biasGiven, country: r.country, locale: r.locale };
    const remember = (ps: Prediction[]) => ps.length && this.cache.set(key, ps);
    const threads = this.pooled;
    const res = threads
      ? await raceBudget(
          r.maxWaitMs,
          threads.search(input, { shedCode: 'AUTOCOMPLETE_BACKPRESSURE', signal: r.signal }),
          remember,
        )
      : await withBudget(r.maxWaitMs, () => search(this.index, input), remember);
    if (!res) return { predictions: [], source: 'budget_expired', budget_expired: true, miss: true };
    remember(res.value);
    return { predictions: res.value, source: res.value.length ? 'fresh' : 'empty', budget_expired: false, miss: true };
  }

  async geocode(address: string, locale: Locale, bias: LatLng) {
    const input = { q: address, bias, biasGiven: false, country: '', locale, limit: 1 };
    const threads = this.pooled;
    const [top] = threads
      ? await threads.search(input, { shedCode: 'GEOCODE_BACKPRESSURE' })
      : search(this.index, input);
    if (!top) return { matched: false, miss: true };
    const p = this.index.byCid(top.place_id.slice(2));
    if (p) {
      return {
        matched: true,
        formatted_address: formattedAddress(p, locale),
        place_id: top.place_id,
        name: displayName(p, locale),
        lat: p.lat,
        lng: p.lng,
        source: 'svc_place_details' as const,
        miss: true,
      };
    }
    return {
      matched: true,
      formatted_address: [top.name, top.address].filter(Boolean).join(', '),
      place_id: top.place_id,
      name: top.name,
      lat: top.lat,
      lng: top.lng,
      source: 'svc_autocomplete' as const,
      miss: true,
    };
  }

  async reverse(at: LatLng, locale: Locale) {
    const key = `rv|${this.index.generation}|${locale}|${at.lat.toFixed(4)},${at.lng.toFixed(4)}`;
    const hit = this.cache.get<ReverseHit>(key);
    if (hit) return { ...hit.value, source: hit.value.source === 'fresh' ? hit.tier : hit.value.source, miss: false };
    const threads = this.pooled;
    const { place_id, ...r } = threads
      ? await threads.reverse(at, locale, { shedCode: 'REVERSE_BACKPRESSURE' })
      : reverse(this.index, at, locale);
    const answer = { ...r, ...(place_id ? { place_id: `g_${place_id}` } : {}) };
    this.cache.set(key, answer);
    return { ...answer, miss: true };
  }

  async place(l: PlaceLookup): Promise<PlaceRecord & { miss: boolean }> {
    const p = /^[0-9a-f]{16}$/i.test(l.id) ? this.index.byCid(l.id.toLowerCase()) : undefined;
    if (!p) {
      if (l.cacheOnly) return cacheOnlyRecord(l);
      throw new AppError('PLACE_NOT_FOUND');
    }
    const photos = [...(p.photos ? (JSON.parse(p.photos) as string[]) : []), ...this.photoFiles.operatorPhotos(p.cid)];
    const localized = { ...(p.name_en ? { en: p.name_en } : {}), ...(p.name_ar ? { ar: p.name_ar } : {}) };
    return {
      place_id: p.cid,
      cid: cidDecimal(p.cid),
      name: displayName(p, l.locale),
      ...(Object.keys(localized).length ? { name_localized: localized } : {}),
      address: addressOf(p, l.locale),
      lat: p.lat,
      lng: p.lng,
      ...(p.phone ? { phone: p.phone } : {}),
      ...(p.website ? { website: p.website } : {}),
      ...(p.category ? { category: p.category } : {}),
      ...(p.hours ? { hours: p.hours } : {}),
      ...(photos.length ? { photos } : {}),
      ownership_tier: p.source === 'geonames' ? 'seed' : 'enriched',
      driver_verifications: 0,
      miss: !l.cacheOnly,
    };
  }

  async photos(at: LatLng) {
    const d = 50 / 111_320;
    const near = this.index.near(at.lat, at.lng, d, d / Math.max(0.1, Math.cos((at.lat * Math.PI) / 180)), [
      'poi',
      'address',
      'street',
      'city',
      'town',
      'village',
      'suburb',
    ]);
    near.sort((a, b) => haversineMeters(at, a) - haversineMeters(at, b));
    const withPhotos = near.find((p) => p.photos || this.photoFiles.operatorPhotos(p.cid).length);
    const p = withPhotos ?? near[0];
    if (!p) return { place_id: '', photos: [] };
    return {
      place_id: `g_${p.cid}`,
      photos: [...(p.photos ? (JSON.parse(p.photos) as string[]) : []), ...this.photoFiles.operatorPhotos(p.cid)],
    };
  }
}
