import { AppError } from '../core/errors.js';

const SHAPES = [/^ChIJ[A-Za-z0-9_-]{8,200}$/, /^0x[0-9a-fA-F]{1,16}:0x[0-9a-fA-F]{1,16}$/, /^[0-9a-fA-F]{12,30}$/];

/** Strips the `g_`/`w_` source prefix and accepts the three ID shapes the spec names (ChIJ..., 0x..:0x.., CID hex). */
export function parsePlaceId(raw: string): string {
  const id = raw.trim().replace(/^[gw]_/, '');
  if (!id) throw new AppError('MISSING_ID');
  if (!SHAPES.some((re) => re.test(id))) throw new AppError('BAD_PLACE_ID');
  return id;
}
