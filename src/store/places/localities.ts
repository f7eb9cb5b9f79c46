import Database from 'better-sqlite3';

/** A city, town or village as the renderer labels it. */
export interface LocalityLabelRow {
  id: number;
  kind: string;
  importance: number;
  lat: number;
  lng: number;
  name: string;
  name_en: string | null;
  name_ar: string | null;
}

/** A city, town or village as address context sees it. */
export interface ContextLocality {
  lat: number;
  lng: number;
  kind: string;
  name_en: string | null;
  name_ar: string | null;
  name: string;
  country: string | null;
}

/** Localities in a box from places.db's own R*Tree, most important first, on one read-only connection. */
export class LocalityLabelReader {
  private readonly db: Database.Database;
  private readonly stmt;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true });
    this.stmt = this.db.prepare<[number, number, number, number, number, number], LocalityLabelRow>(
      `SELECT p.id, p.kind, p.importance, p.lat, p.lng, p.name, p.name_en, p.name_ar
       FROM localities_rtree r CROSS JOIN places p ON p.id = r.id
       WHERE r.min_lat >= ? AND r.max_lat <= ? AND r.min_lng >= ? AND r.max_lng <= ? AND p.importance >= ?
       ORDER BY p.importance DESC LIMIT ?`,
    );
  }

  /** Localities inside `[minLng, minLat, maxLng, maxLat]` of at least `minImportance`, at most `limit`. */
  inBox(
    [minLng, minLat, maxLng, maxLat]: [number, number, number, number],
    minImportance: number,
    limit: number,
  ): LocalityLabelRow[] {
    return this.stmt.all(minLat, maxLat, minLng, maxLng, minImportance, limit);
  }

  close(): void {
    this.db.close();
  }
}

/** Every city, town and village in a places.db, read once and closed. */
export function readContextLocalities(file: string): ContextLocality[] {
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare<[], ContextLocality>(
        "SELECT lat, lng, kind, name_en, name_ar, name, country FROM places WHERE kind IN ('city', 'town', 'village')",
      )
      .all();
  } finally {
    db.close();
  }
}
