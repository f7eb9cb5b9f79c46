/**
 * Ring orientation for area features, so the renderer can batch many areas into one path and fill it with the
 * non-zero rule: outer rings all turn one way (clockwise on screen) and holes the other. With even-odd over a shared
 * path, two overlapping parks or building parts would cancel out where they overlap and show a hole.
 */
function signedArea(r: Float64Array): number {
  let a = 0;
  for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) a += (r[j]! - r[i]!) * (r[j + 1]! + r[i + 1]!);
  return a / 2; // > 0: clockwise on screen (y grows down)
}

function contains(r: Float64Array, x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
    const xi = r[i]!,
      yi = r[i + 1]!,
      xj = r[j]!,
      yj = r[j + 1]!;
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}

function reversed(r: Float64Array): Float64Array {
  const out = new Float64Array(r.length);
  for (let i = 0; i < r.length; i += 2) {
    out[i] = r[r.length - 2 - i]!;
    out[i + 1] = r[r.length - 1 - i]!;
  }
  return out;
}

/** A ring inside an odd number of the feature's other rings is a hole (anticlockwise); every other ring is clockwise. */
export function orientRings(rings: Float64Array[]): Float64Array[] {
  return rings.map((r, i) => {
    const depth = rings.reduce((d, o, j) => (j !== i && contains(o, r[0]!, r[1]!) ? d + 1 : d), 0);
    const wantClockwise = depth % 2 === 0;
    return signedArea(r) > 0 === wantClockwise ? r : reversed(r);
  });
}
