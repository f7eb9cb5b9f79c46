/**
 * The seam for gazetteer labels (cities, towns) from the places index. Until the appliance wires one in, the renderer
 * uses `noPlaceLabels` and shows only Natural Earth country names and the place nodes of an OSM import.
 */
export interface PlaceLabel {
  id: number;
  /** city, town, village, suburb, ... */
  kind: string;
  /** Lower is more important (drawn first, wins collisions). */
  rank: number;
  lng: number;
  lat: number;
  name?: string;
  nameEn?: string;
  nameAr?: string;
}

export interface PlaceLabelSource {
  /** Labels inside [minLng, minLat, maxLng, maxLat] worth showing at `zoom`. */
  labelsFor(bbox: [number, number, number, number], zoom: number): PlaceLabel[];
}

export const noPlaceLabels: PlaceLabelSource = { labelsFor: () => [] };
