import { haversineMeters, type LatLng } from '../core/geo.js';
import { normalizeText, tokenize } from '../core/normalize.js';
import { CONTEXT_MARK, FTS_PREFIX_MAX, cellToken, cellsAround, nearExpression } from '../store/places/schema.js';
import type { IndexedPlace, PlacesIndex } from '../store/places/index-db.js';
import { addressOf, displayName } from './format.js';
import type { Locale, Prediction } from './types.js';

export interface SearchInput {
  q: string;
  bias: LatLng;
  /** Whether the caller gave the bias point (then distances are meaningful to them and are returned). */
  biasGiven: boolean;
  country: string;
  locale: Locale;
  limit?: number;
}

/** A query of more words than this is matched on its first ones (FTS cost grows with every term). */
const MAX_TOKENS = 8;
const GLOBAL_CANDIDATES = 100;
const LOCAL_CANDIDATES = 200;
/** Proximity decays over tens of kilometres: a nearby town outranks a distant city, a capital still wins its name. */
const PROXIMITY_WEIGHT = 0.6;
const PROXIMITY_SCALE_KM = 25;
const COUNTRY_BONUS = 0.08;
/** Rows read beyond what the answer still needs, for near-duplicates it collapses. */
const ROWS_AHEAD = 2;

const quote = (t: string) => `"${t.replace(/"/g, '""')}"`;

/** A typed word longer than the prefix indexes is matched as the terms it begins, when they are this few. */
const MAX_PREFIX_TERMS = 32;

/**
 * FTS5 expression: every token but the last must match a whole token, the last is a prefix (typing in progress);
 * undefined when no indexed term starts with the last.
 */
function ftsExpression(index: PlacesIndex, tokens: string[]): string | undefined {
  const last = tokens[tokens.length - 1]!;
  let tail = `${quote(last)}*`;
  if ([...last].length > FTS_PREFIX_MAX) {
    const terms = index.prefixTerms(last, MAX_PREFIX_TERMS);
    if (terms?.length === 0) return undefined;
    if (terms) tail = `(${terms.map(quote).join(' OR ')})`;
  }
  return [...tokens.slice(0, -1).map(quote), tail].join(' AND ');
}

/**
 * The most important matches of `expr` in the 3x3 one-degree cells around the bias point. Every typed word long
 * enough to have near tokens narrows the search to the places near here with a word beginning as it does (a match
 * has such a word for each of them, so the answer is the same). Narrowing by the last word alone left "Sankt J" or
 * "Im L" (a last word of one letter) to the cell tokens: 4-15 ms at 600 copies, where every street name is in 600
 * places; 0.3-3 ms with the other words' near tokens.
 */
function nearby(index: PlacesIndex, expr: string, qTokens: string[], { bias }: SearchInput): number[] {
  // every word but the last is whole (matched as a whole token); the last is being typed
  const whole = (i: number) => index.nearShortWords && i < qTokens.length - 1;
  const near = index.nearTokens
    ? qTokens.flatMap((t, i) => nearExpression(bias.lat, bias.lng, t, whole(i)) ?? []).map((e) => `(${e})`)
    : [];
  const cells = near.length ? near.join(' AND ') : cellsAround(bias.lat, bias.lng, cellToken);
  return index.match(`(${expr}) AND (${cells})`, LOCAL_CANDIDATES);
}

/** How well the text matches a place's names: whole name, name prefix, or every token (last as prefix). */
const bareOf = (s: string) => (s.startsWith('ال') ? s.slice(2) : s);

/** Scores for [exact, prefix, every token] matches: a name itself, or a name followed by its address context. */
const NAME_SCORES = [1, 0.9, 0.7] as const;
const CONTEXT_SCORES = [0.95, 0.85, 0.45] as const;

/**
 * An exact match of one of a place's other names (GeoNames alternate names: old, foreign or colloquial ones) scores
 * a little below an exact match of its own name, so "rome" finds Rome before Lomé, one of whose alternate names is
 * "Rome", and a tie between two own names is still decided by importance and distance.
 */
const ALTERNATE_EXACT = 0.97;

/**
 * The place's own names (name, English, Arabic) come first in its search names and are the ones its address
 * context entries are made of (builder.ts searchFields); the first entry always is one.
 */
function isOwnName(names: string[], i: number): boolean {
  if (i === 0) return true;
  const name = names[i]!;
  return names.some((e) => e.startsWith(CONTEXT_MARK) && e.startsWith(name + ' ', 1));
}

function textScore(qNorm: string, qTokens: string[], names: string[]): number {
  let best = 0;
  for (let i = 0; i < names.length; i++) {
    const entry = names[i]!;
    const ctx = entry.startsWith(CONTEXT_MARK);
    const name = ctx ? entry.slice(1) : entry;
    const [exact, prefix, tokens] = ctx ? CONTEXT_SCORES : NAME_SCORES;
    const bare = bareOf(name);
    if (name === qNorm || bare === qNorm)
      best = Math.max(best, ctx || isOwnName(names, i) ? exact : exact * ALTERNATE_EXACT);
    else if (name.startsWith(qNorm) || bare.startsWith(qNorm))
      best = Math.max(best, prefix - Math.min(0.15, (name.length - qNorm.length) * 0.01));
    else if (best < tokens) {
      const toks = name.split(' ');
      const all = qTokens.every((t, i) =>
        toks.some((n) =>
          i === qTokens.length - 1 ? n.startsWith(t) || bareOf(n).startsWith(t) : n === t || bareOf(n) === t,
        ),
      );
      if (all) best = tokens;
    }
    if (best === 1) break;
  }
  return best;
}

function rank(index: PlacesIndex, id: number, text: number, input: SearchInput): number {
  const km = haversineMeters(input.bias, { lat: index.lat[id]!, lng: index.lng[id]! }) / 1000;
  const proximity = PROXIMITY_WEIGHT * Math.exp(-km / PROXIMITY_SCALE_KM);
  return text * (index.importance[id]! + proximity) + (index.countryOf(id) === input.country ? COUNTRY_BONUS : 0);
}

/**
 * Autocomplete: candidates are the globally most important matches plus the most important matches in the 3x3
 * one-degree cells around the bias point (both bounded FTS queries), ranked by text match x (importance + proximity),
 * with near-identical results (same shown name within 2 km) collapsed.
 */
export function search(index: PlacesIndex, input: SearchInput): Prediction[] {
  const qTokens = tokenize(input.q).slice(0, MAX_TOKENS);
  if (!qTokens.length) return [];
  const expr = ftsExpression(index, qTokens);
  if (!expr) return [];
  const global = index.match(expr, GLOBAL_CANDIDATES);
  // fewer than asked for: that is every match, the nearby ones among them
  const ids = new Set(global.length < GLOBAL_CANDIDATES ? global : [...global, ...nearby(index, expr, qTokens, input)]);
  const qNorm = normalizeText(input.q);
  const limit = input.limit ?? 10;
  const best = [...ids]
    .map((id) => ({ id, score: rank(index, id, textScore(qNorm, qTokens, index.names(id)), input) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score)
    .slice(0, limit * 3); // head-room for collapsing near-duplicates
  // Rows are read a few more than the answer needs at a time: a random row of a country's index costs ~17 us, and
  // near-duplicates are rare, so the head-room is seldom read.
  const rows = new Map<number, IndexedPlace>();
  const out: Prediction[] = [];
  const kept: Array<{ name: string; at: LatLng }> = [];
  for (let i = 0; i < best.length; i++) {
    if (!rows.has(best[i]!.id))
      for (const r of index.byIds(best.slice(i, i + limit - out.length + ROWS_AHEAD).map((b) => b.id)))
        rows.set(r.id, r);
    const p = rows.get(best[i]!.id)!;
    const name = displayName(p, input.locale);
    const key = normalizeText(name);
    if (kept.some((k) => k.name === key && haversineMeters(k.at, p) < 2000)) continue;
    kept.push({ name: key, at: p });
    const distance = input.biasGiven ? Math.round(haversineMeters(input.bias, p)) : 0;
    out.push({
      place_id: `g_${p.cid}`,
      name,
      address: addressOf(p, input.locale),
      ...(distance > 0 ? { distance_meters: distance } : {}),
      lat: p.lat,
      lng: p.lng,
      ownership_tier: p.source === 'geonames' ? 'seed' : 'enriched',
      driver_verifications: 0,
    });
    if (out.length >= limit) break;
  }
  return out;
}
