import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PlaceLabel, PlaceLabelSource } from '../render/place-labels.js';
import { PLACES_FILE } from './load.js';

const KIND_RANK: Record<string, number> = { city: 1, town: 2, village: 3 };

/** The least importance a locality needs to be labelled at a zoom (importance comes from population, see gazetteer). */
function minImportance(zoom: number): number {
  if (zoom <= 3) return 2; // country names only (drawn from Natural Earth)
  if (zoom <= 5) return 0.85; // capitals and cities of millions
  if (zoom <= 7) return 0.72;
  if (zoom <= 9) return 0.58;
  if (zoom <= 11) return 0.45;
  return 0;
}

/**
 * City, town and village labels for the renderer, read from the places index (the embedded gazetteer and imported
 * place nodes), most important first. Each render thread opens its own read-only connection.
 */
export class GazetteerLabels implements PlaceLabelSource {
  private readonly stmt;

  private constructor(private readonly db: Database.Database) {
    this.stmt = db.prepare<
      [number, number, number, number, number, number],
      {
        id: number;
        kind: string;
        importance: number;
        lat: number;
        lng: number;
        name: string;
        name_en: string | null;
        name_ar: string | null;
      }
    >(
      `SELECT p.id, p.kind, p.importance, p.lat, p.lng, p.name, p.name_en, p.name_ar
       FROM localities_rtree r CROSS JOIN places p ON p.id = r.id
       WHERE r.min_lat >= ? AND r.max_lat <= ? AND r.min_lng >= ? AND r.max_lng <= ? AND p.importance >= ?
       ORDER BY p.importance DESC LIMIT ?`,
    );
  }

  static inDataDir(dataDir: string): GazetteerLabels | undefined {
    const file = join(dataDir, PLACES_FILE);
    return existsSync(file) ? new GazetteerLabels(new Database(file, { readonly: true })) : undefined;
  }

  labelsFor([minLng, minLat, maxLng, maxLat]: [number, number, number, number], zoom: number): PlaceLabel[] {
    const min = minImportance(zoom);
    if (min > 1.5) return [];
    return this.stmt.all(minLat, maxLat, minLng, maxLng, min, 150).map((p) => ({
      id: p.id,
      kind: p.kind,
      // The renderer's place ranks (city 1, town 2, village 3), ordered within a class by importance.
      rank: (KIND_RANK[p.kind] ?? 4) + Math.max(0, Math.min(0.99, 1 - p.importance)),
      lng: p.lng,
      lat: p.lat,
      name: p.name,
      nameEn: p.name_en ?? undefined,
      nameAr: p.name_ar ?? undefined,
    }));
  }

  close(): void {
    this.db.close();
  }
}
