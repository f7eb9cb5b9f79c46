import type { Map as MlMap, Marker } from 'maplibre-gl';
import { api } from './api.js';
import { byId, fmtDistance, fmtDuration, h } from './dom.js';
import { currentLang, t } from './i18n.js';
import { drawRoutes, marker, type LngLat, type RouteLine } from './map.js';

interface Maneuver {
  type: string;
  instruction: string;
  distance_m: number;
  duration_s: number;
  street_name?: string;
}

interface RouteRecord {
  label: string;
  distance_meters: number;
  duration_seconds: number;
  polyline: string;
  maneuvers?: Maneuver[];
}

interface Directions {
  /** Absent on the multi-leg shape (with waypoints). */
  routes?: RouteRecord[];
  legs?: number;
  polyline: string;
  distance_meters: number;
  duration_seconds: number;
  partial?: boolean;
  source: string;
}

export interface End extends LngLat {
  name: string;
}

const coordsOf = (polyline: string): number[][] => (JSON.parse(polyline) as { coordinates: number[][] }).coordinates;
/** The multi-leg shape's polyline: a MultiLineString, one member per leg. */
const legsOf = (polyline: string): number[][][] => (JSON.parse(polyline) as { coordinates: number[][][] }).coordinates;

/** The API takes up to 4 stops between origin and destination. */
const MAX_STOPS = 4;

/** Origin and destination from clicks or results; the route, its alternatives and the maneuver list. */
export class DirectionsPanel {
  private from?: End;
  private to?: End;
  private stops: End[] = [];
  private markers: Partial<Record<'from' | 'to', Marker>> = {};
  private stopMarkers: Marker[] = [];
  private seq = 0;

  constructor(
    private readonly map: MlMap,
    private readonly fail: (e: unknown) => void,
  ) {
    byId('dir-clear').addEventListener('click', () => this.clear());
  }

  set(which: 'from' | 'to', end: End): void {
    this[which] = end;
    this.markers[which]?.remove();
    this.markers[which] = marker(this.map, end, which === 'from' ? '#2e7d32' : '#c62828', `${t(which)}: ${end.name}`);
    byId(`dir-${which}`).textContent = end.name;
    if (this.from && this.to) void this.route();
  }

  /** Adds a stop (waypoint) before the destination; false when the API's limit is reached. */
  addStop(end: End): boolean {
    if (this.stops.length >= MAX_STOPS) return false;
    this.stops.push(end);
    this.stopMarkers.push(marker(this.map, end, '#8e44ad', `${t('stop')} ${this.stops.length}: ${end.name}`));
    this.renderStops();
    if (this.from && this.to) void this.route();
    return true;
  }

  private renderStops(): void {
    byId('dir-stops').replaceChildren(...this.stops.map((st, i) => h('li', {}, `${t('stop')} ${i + 1}: ${st.name}`)));
  }

  clear(): void {
    this.from = this.to = undefined;
    this.stops = [];
    for (const m of [...Object.values(this.markers), ...this.stopMarkers]) m?.remove();
    this.markers = {};
    this.stopMarkers = [];
    this.renderStops();
    byId('dir-from').textContent = byId('dir-to').textContent = '—';
    byId('dir-result').replaceChildren();
    drawRoutes(this.map, []);
  }

  /** Re-asks in the new language (maneuver instructions and street names come from the server). */
  relabel(): void {
    if (this.from && this.to) void this.route();
  }

  private async route(): Promise<void> {
    const a = this.from!,
      b = this.to!;
    const seq = ++this.seq;
    const out = byId('dir-result');
    out.replaceChildren(h('p', { class: 'hint' }, t('routing')));
    try {
      const d = await api<Directions>('POST', '/maps/v1/directions', {
        origin_lat: a.lat,
        origin_lng: a.lng,
        dest_lat: b.lat,
        dest_lng: b.lng,
        // every road point: the console is where a route is checked, zoomed in to the street it takes
        overview: 'full',
        ...(this.stops.length ? { waypoints: this.stops.map((st) => ({ lat: st.lat, lng: st.lng })) } : {}),
      });
      if (seq !== this.seq) return;
      this.show(d);
    } catch (e) {
      if (seq !== this.seq) return;
      out.replaceChildren();
      drawRoutes(this.map, []);
      this.fail(e);
    }
  }

  private show(d: Directions): void {
    const lang = currentLang();
    const out = byId('dir-result');
    if (!d.routes) {
      this.showLegs(d);
      return;
    }
    const degraded = d.partial === true || d.source === 'server_straight' || d.routes.length === 0;
    if (degraded) {
      drawRoutes(this.map, [{ kind: 'straight', coordinates: coordsOf(d.polyline) }]);
      out.replaceChildren(
        h('p', { class: 'degraded', role: 'note' }, t('straight')),
        h('p', {}, `${fmtDistance(d.distance_meters, lang)} · ${fmtDuration(d.duration_seconds, lang)}`),
      );
      return;
    }
    const routes = d.routes;
    const lines: RouteLine[] = routes.map((r, i) => ({
      kind: i === 0 ? 'main' : 'alt',
      coordinates: coordsOf(r.polyline),
    }));
    drawRoutes(this.map, lines);
    const summary = h(
      'ul',
      { class: 'routes' },
      ...routes.map((r, i) =>
        h(
          'li',
          { class: i === 0 ? 'primary' : 'alt', 'data-route': String(i) },
          h('strong', {}, i === 0 ? t('route') : `${t('alternative')} ${i}`),
          ` ${r.label && !r.label.startsWith('Alternative') ? `(${r.label}) ` : ''}${fmtDistance(r.distance_meters, lang)} · ${fmtDuration(r.duration_seconds, lang)}`,
        ),
      ),
    );
    const steps = routes[0]?.maneuvers ?? [];
    out.replaceChildren(
      summary,
      h('h3', {}, t('maneuvers')),
      h(
        'ol',
        { id: 'maneuvers', class: 'maneuvers' },
        ...steps.map((m) =>
          h(
            'li',
            { 'data-type': m.type },
            h('span', { class: 'instr' }, m.instruction),
            h('span', { class: 'meta' }, `${fmtDistance(m.distance_m, lang)} · ${fmtDuration(m.duration_s, lang)}`),
          ),
        ),
      ),
    );
  }

  /** Multi-leg answer: totals only; a leg the server could not route is a two-point straight line, drawn dashed. */
  private showLegs(d: Directions): void {
    const lang = currentLang();
    const legs = legsOf(d.polyline);
    drawRoutes(
      this.map,
      legs.map((c) => ({ kind: d.partial && c.length === 2 ? 'straight' : 'main', coordinates: c })),
    );
    byId('dir-result').replaceChildren(
      h(
        'p',
        { class: 'legs' },
        `${t('legs')}: ${new Intl.NumberFormat(lang).format(d.legs ?? legs.length)} · ${fmtDistance(d.distance_meters, lang)} · ${fmtDuration(d.duration_seconds, lang)}`,
      ),
      ...(d.partial ? [h('p', { class: 'degraded', role: 'note' }, t('straightLegs'))] : []),
    );
  }
}
