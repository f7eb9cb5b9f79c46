/**
 * Instruction text in English and Arabic for OSRM-style maneuvers (type + modifier). Arabic uses the way's
 * `name:ar` when the map has one (chosen by the caller); other names stay as mapped.
 */
export type Locale = 'en' | 'ar';
export type Modifier =
  'uturn' | 'sharp right' | 'right' | 'slight right' | 'straight' | 'slight left' | 'left' | 'sharp left';

const MOD_AR: Record<Modifier, string> = {
  uturn: 'للخلف',
  'sharp right': 'بحدة إلى اليمين',
  right: 'يمينًا',
  'slight right': 'قليلًا إلى اليمين',
  straight: 'مباشرةً',
  'slight left': 'قليلًا إلى اليسار',
  left: 'يسارًا',
  'sharp left': 'بحدة إلى اليسار',
};
const COMPASS_EN = ['north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'];
const COMPASS_AR = [
  'الشمال',
  'الشمال الشرقي',
  'الشرق',
  'الجنوب الشرقي',
  'الجنوب',
  'الجنوب الغربي',
  'الغرب',
  'الشمال الغربي',
];
const ORD_EN = ['1st', '2nd', '3rd'];
const ORD_AR = ['الأول', 'الثاني', 'الثالث', 'الرابع', 'الخامس', 'السادس', 'السابع', 'الثامن', 'التاسع', 'العاشر'];

/** Signed turn angle (degrees, right positive) to an OSRM modifier. */
export function modifierOf(angle: number): Modifier {
  const a = Math.abs(angle);
  if (a < 20) return 'straight';
  const side = angle > 0 ? 'right' : 'left';
  if (a < 60) return `slight ${side}`;
  if (a < 135) return side;
  if (a < 170) return `sharp ${side}`;
  return 'uturn';
}

export interface InstructionInput {
  type: 'depart' | 'turn' | 'continue' | 'roundabout' | 'merge' | 'fork' | 'arrive';
  modifier?: Modifier;
  bearing?: number;
  exit?: number;
  name: string;
}

export function instruction(i: InstructionInput, locale: Locale): string {
  return locale === 'ar' ? arabic(i) : english(i);
}

function english({ type, modifier = 'straight', bearing = 0, exit = 1, name }: InstructionInput): string {
  const onto = name ? ` onto ${name}` : '';
  switch (type) {
    case 'depart':
      return `Head ${COMPASS_EN[compass(bearing)]}${name ? ` on ${name}` : ''}`;
    case 'arrive':
      return 'You have arrived at your destination';
    case 'roundabout':
      return `At the roundabout, take the ${exit <= 3 ? ORD_EN[exit - 1] : `${exit}th`} exit${onto}`;
    case 'merge':
      return `Merge ${modifier.includes('left') ? 'left' : 'right'}${onto}`;
    case 'fork':
      return `Keep ${modifier.includes('left') ? 'left' : 'right'} at the fork${onto}`;
    case 'continue':
      return modifier === 'straight' ? `Continue${onto || ' straight'}` : `Continue ${modifier}${onto}`;
    case 'turn':
      if (modifier === 'uturn') return `Make a U-turn${onto}`;
      if (modifier === 'straight') return `Go straight${onto}`;
      return `Turn ${modifier}${onto}`;
  }
}

function arabic({ type, modifier = 'straight', bearing = 0, exit = 1, name }: InstructionInput): string {
  const to = name ? ` إلى ${name}` : '';
  const left = modifier.includes('left');
  switch (type) {
    case 'depart':
      return `اتجه نحو ${COMPASS_AR[compass(bearing)]}${name ? ` على ${name}` : ''}`;
    case 'arrive':
      return 'لقد وصلت إلى وجهتك';
    case 'roundabout':
      return `عند الدوار، اسلك المخرج ${ORD_AR[exit - 1] ?? `رقم ${exit}`}${to}`;
    case 'merge':
      return `اندمج ${left ? 'يسارًا' : 'يمينًا'}${to}`;
    case 'fork':
      return `عند التفرع، الزم ${left ? 'اليسار' : 'اليمين'}${to}`;
    case 'continue':
      return `تابع ${MOD_AR[modifier]}${to}`;
    case 'turn':
      if (modifier === 'uturn') return `قم بالاستدارة للخلف${to}`;
      if (modifier === 'straight') return `تابع مباشرةً${to}`;
      return `انعطف ${MOD_AR[modifier]}${to}`;
  }
}

const compass = (bearing: number) => Math.round((((bearing % 360) + 360) % 360) / 45) % 8;
