/**
 * Turn costs of the car profile, for right-hand traffic (every country of the region drives on the right). A turn
 * is priced where a chain of road edges meets the next at a junction (import/roads/turns.ts) and the hierarchy is
 * built over those turns, so every route, alternative and duration includes them:
 * - no cost where only two roads meet (a way continuing as another, a bend): nothing to give way to;
 * - at an intersection (three roads or more) the cost grows with the sharpness of the turn, up to TURN_MS for a
 *   hairpin; a left turn crosses oncoming traffic and costs LEFT_BIAS times a right one;
 * - going straight on or left across a crossing (four roads or more) waits for cross traffic: CROSSING_MS more;
 * - a U-turn costs U_TURN_MS and is only possible where there is no other way on (a dead end, or a junction whose
 *   other exits are all forbidden); elsewhere the router turns around by driving round a block.
 * The figures follow what OSRM's and GraphHopper's car profiles charge (a 90 degree turn costs a few seconds).
 */
export const U_TURN_MS = 20_000;
const TURN_MS = 7_500;
const LEFT_BIAS = 1.4;
const CROSSING_MS = 1_500;
/** Turns gentler than this (degrees) count as straight on. */
const STRAIGHT_DEG = 30;

/**
 * Change of heading at v when driving a -> v -> b, in degrees: 0 straight on, positive to the right, negative to
 * the left, +-180 back. Local flat projection (the legs are road segments, metres to a few km).
 */
export function turnAngle(aLat: number, aLon: number, vLat: number, vLon: number, bLat: number, bLon: number): number {
  const k = Math.cos((vLat * Math.PI) / 180);
  const x1 = (vLon - aLon) * k,
    y1 = vLat - aLat,
    x2 = (bLon - vLon) * k,
    y2 = bLat - vLat;
  if ((x1 === 0 && y1 === 0) || (x2 === 0 && y2 === 0)) return 0;
  // clockwise (to the right) is negative in the usual x-east, y-north orientation
  return (-Math.atan2(x1 * y2 - y1 * x2, x1 * x2 + y1 * y2) * 180) / Math.PI;
}

/** Cost in ms of turning by `angle` degrees (turnAngle) at a junction where `roads` road segments meet. */
export function turnMs(angle: number, roads: number): number {
  if (roads <= 2) return 0;
  const sharp = Math.min(1, Math.abs(angle) / 180);
  let ms = TURN_MS * sharp * Math.sqrt(sharp);
  if (angle < 0) ms *= LEFT_BIAS;
  if (roads >= 4 && angle < STRAIGHT_DEG) ms += CROSSING_MS;
  return Math.round(ms);
}
