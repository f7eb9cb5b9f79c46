import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PlaceLabel, PlaceLabelSource } from '../render/place-labels.js';
import { LocalityLabelReader } from '../store/places/localities.js';
import { PLACES_FILE } from '../store/places/schema.js';

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
  private constructor(private readonly reader: LocalityLabelReader) {}

  static inDataDir(dataDir: string): GazetteerLabels | undefined {
    const file = join(dataDir, PLACES_FILE);
    return existsSync(file) ? new GazetteerLabels(new LocalityLabelReader(file)) : undefined;
  }

  labelsFor(box: [number, number, number, number], zoom: number): PlaceLabel[] {
    const min = minImportance(zoom);
    if (min > 1.5) return [];
    return this.reader.inBox(box, min, 150).map((p) => ({
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
    this.reader.close();
  }
}
