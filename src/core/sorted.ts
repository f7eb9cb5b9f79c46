/** Binary searches over ascending typed arrays (node ids, edge ids, way ends, junctions). */

/** The index of `x` in ascending `a`, or -1. */
export function indexOfSorted(a: ArrayLike<number>, x: number): number {
  let lo = 0,
    hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else if (a[mid]! > x) hi = mid - 1;
    else return mid;
  }
  return -1;
}

/** The first index of ascending `a` whose value is not below `x` (a.length when all are). */
export function lowerBound(a: ArrayLike<number>, x: number): number {
  let lo = 0,
    hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
