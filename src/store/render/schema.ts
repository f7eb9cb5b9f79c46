/** The imported OSM features in the data directory. */
export const RENDER_DB = 'render.db';

/** Schema of render.db (the R*Tree's third dimension is the feature's first zoom, so far-out tiles skip buildings), built by the render importer into a temp file and renamed over the live one. */
export const RENDER_SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE features (
  id INTEGER PRIMARY KEY, layer TEXT NOT NULL, cls TEXT NOT NULL, minzoom INTEGER NOT NULL, rank INTEGER NOT NULL,
  name TEXT, name_en TEXT, name_ar TEXT, geom BLOB NOT NULL
);
CREATE VIRTUAL TABLE features_rtree USING rtree(id, minx, maxx, miny, maxy, minz, maxz);
`;
