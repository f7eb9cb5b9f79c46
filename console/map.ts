import * as maplibregl from 'maplibre-gl';
import { api } from './api.js';

export interface LngLat {
  lng: number;
  lat: number;
}

interface TileToken {
  token: string;
  expires_at: string;
}

/** The tile token for the tile family (?t=): minted with the key, renewed before it expires. */
export class TokenKeeper {
  token = '';
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly onError: (e: unknown) => void) {}

  async start(): Promise<void> {
    await this.renew();
  }

  private async renew(): Promise<void> {
    const t = await api<TileToken>('POST', '/maps/v1/tile-token');
    this.token = t.token;
    const left = Date.parse(t.expires_at) - Date.now();
    // Renew at 80% of the lifetime (at least a minute before expiry), retry in 30 s when renewing fails.
    this.schedule(Math.max(5_000, Math.min(left * 0.8, left - 60_000)));
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () =>
        void this.renew().catch((e: unknown) => {
          this.onError(e);
          this.schedule(30_000);
        }),
      Math.min(ms, 2 ** 31 - 1),
    );
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

const ROUTE_SRC = 'svc-routes';

/** The map on the raster-nav style; every tile-family URL gets the current token, so renewal needs no reload. */
export function createMap(container: HTMLElement, tokens: TokenKeeper): maplibregl.Map {
  const abs = (u: string) => new URL(u, location.href);
  const map = new maplibregl.Map({
    container,
    style: abs(`/maps/v1/style/raster-nav?token=${tokens.token}&t=${tokens.token}`).href,
    center: [10, 30],
    zoom: 1.5,
    fadeDuration: 0,
    attributionControl: { compact: true },
    transformRequest: (url) => {
      const u = abs(url);
      if (u.origin === location.origin && u.pathname.startsWith('/maps/v1/')) {
        if (u.searchParams.has('t')) u.searchParams.set('t', tokens.token);
        if (u.searchParams.has('token')) u.searchParams.set('token', tokens.token);
        // The style's template asks for @2x tiles (512 px for 256 CSS px). On a screen of fewer than 1.5 device
        // pixels per CSS pixel the @1x tile looks the same at a quarter of the pixels to render, send and decode.
        if (devicePixelRatio < 1.5 && u.pathname.startsWith('/maps/v1/tiles/'))
          u.pathname = u.pathname.replace(/@2x\.png$/, '.png');
      }
      return { url: u.href };
    },
  });
  map.addControl(new maplibregl.NavigationControl(), 'top-right');
  // First paint, for the browser test and anyone profiling: 'load' is the first complete frame, 'idle' all settled.
  map.once('load', () => performance.mark('svcmaps:map-load'));
  map.once('idle', () => performance.mark('svcmaps:map-idle'));
  map.on('load', () => {
    map.addSource(ROUTE_SRC, { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
    map.addLayer({
      id: 'route-alt',
      type: 'line',
      source: ROUTE_SRC,
      filter: ['==', ['get', 'kind'], 'alt'],
      layout: { 'line-join': 'round', 'line-cap': 'round' },
      paint: { 'line-color': '#7f8c8d', 'line-width': 5, 'line-opacity': 0.8 },
    });
    map.addLayer({
      id: 'route-main',
      type: 'line',
      source: ROUTE_SRC,
      filter: ['==', ['get', 'kind'], 'main'],
      layout: { 'line-join': 'round', 'line-cap': 'round' },
      paint: { 'line-color': '#1f6feb', 'line-width': 6 },
    });
    // A degraded answer is a straight line between the ends: dashed, never drawn like a road.
    map.addLayer({
      id: 'route-straight',
      type: 'line',
      source: ROUTE_SRC,
      filter: ['==', ['get', 'kind'], 'straight'],
      paint: { 'line-color': '#c0392b', 'line-width': 3, 'line-dasharray': [2, 2] },
    });
  });
  return map;
}

export type RouteLine = { kind: 'main' | 'alt' | 'straight'; coordinates: number[][] };

export function drawRoutes(map: maplibregl.Map, lines: RouteLine[]): void {
  const src = map.getSource<maplibregl.GeoJSONSource>(ROUTE_SRC);
  if (!src) return;
  void src.setData({
    type: 'FeatureCollection',
    // Alternatives first so the primary route draws on top of them.
    features: [...lines]
      .sort((a, b) => (a.kind === 'alt' ? -1 : 0) - (b.kind === 'alt' ? -1 : 0))
      .map((l) => ({
        type: 'Feature',
        properties: { kind: l.kind },
        geometry: { type: 'LineString', coordinates: l.coordinates },
      })),
  });
  const all = lines.flatMap((l) => l.coordinates);
  if (all.length < 2) return;
  const b = new maplibregl.LngLatBounds();
  for (const c of all) b.extend([c[0]!, c[1]!]);
  map.fitBounds(b, { padding: 60, duration: 600, maxZoom: 17 });
}

export function marker(map: maplibregl.Map, at: LngLat, color: string, label: string): maplibregl.Marker {
  const m = new maplibregl.Marker({ color }).setLngLat([at.lng, at.lat]).addTo(map);
  m.getElement().setAttribute('aria-label', label);
  m.getElement().setAttribute('role', 'img');
  return m;
}
