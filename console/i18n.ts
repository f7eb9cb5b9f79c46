/** English and Arabic strings; the document's lang/dir follow the choice, API calls carry it as `locale`. */
export type Lang = 'en' | 'ar';

const EN = {
  title: 'svcmaps console',
  tabMap: 'Map',
  tabAdmin: 'Admin',
  signIn: 'Sign in',
  signOut: 'Sign out',
  apiKey: 'API key',
  keyNote: 'The key stays in this tab (session storage) and is sent only as a header.',
  search: 'Search',
  searchPlaceholder: 'Search places',
  whatsHere: 'What is at the map centre?',
  noResults: 'No results',
  map: 'Map',
  directions: 'Directions',
  dirHint: 'Click the map or choose a result, then set it as the start or the end.',
  from: 'From',
  to: 'To',
  clear: 'Clear',
  fromHere: 'Directions from here',
  toHere: 'Directions to here',
  addStop: 'Add as a stop',
  stop: 'Stop',
  tooManyStops: 'At most 4 stops.',
  legs: 'Legs',
  straightLegs: 'Some legs are straight lines only (no road route found in time); they are not roads.',
  routing: 'Finding a route…',
  route: 'Route',
  alternative: 'Alternative',
  straight: 'Straight line only: no road route was found in time. This is not a road; try again in a moment.',
  maneuvers: 'Maneuvers',
  clickedPoint: 'Point on the map',
  noAddress: 'No address here',
  address: 'Address',
  category: 'Category',
  phone: 'Phone',
  website: 'Website',
  photoOf: 'Photo of',
  keys: 'API keys',
  name: 'Name',
  plan: 'Plan',
  role: 'Role',
  perMinute: 'Per minute',
  daily: 'Daily quota',
  state: 'State',
  created: 'Created',
  create: 'Create key',
  revoke: 'Revoke',
  revokeOf: 'Revoke key',
  newKey: 'New key (shown once, copy it now):',
  usage: 'Usage today',
  requests: 'Requests',
  misses: 'Misses (gather / tiles)',
  used: 'Quota used',
  lastSeen: 'Last seen',
  status: 'Server status',
  refresh: 'Refresh',
  error: 'Something went wrong',
  errors: {
    MISSING_TOKEN: 'Enter an API key.',
    INVALID_API_KEY: 'This API key is not valid.',
    API_KEY_EXPIRED: 'This API key has expired.',
    API_KEY_REVOKED: 'This API key has been revoked.',
    TOKEN_EXPIRED: 'The map session expired; renewing it.',
    RATE_LIMIT_EXCEEDED: 'Too many requests: rate limited. Wait a moment and try again.',
    MAPS_QUOTA_EXCEEDED: "This key's daily quota is used up; it resets at midnight UTC.",
    INSUFFICIENT_ROLE: 'This key may not do that (super_admin only).',
    MAPS_UNAVAILABLE: 'The maps engine is switched off on this server.',
    DIRECTIONS_UNROUTABLE: 'No route exists between these points.',
    SAME_POINT: 'Start and end are the same point.',
    BACKPRESSURE: 'The server is busy; try again in a few seconds.',
    UNAVAILABLE: 'This service is unavailable right now.',
    DISABLED: 'This feature is switched off on this server.',
    VALIDATION_ERROR: 'The request was not valid.',
    KEY_NOT_FOUND: 'No such key.',
    NETWORK: 'The server could not be reached.',
  } as Record<string, string>,
};

const AR: typeof EN = {
  title: 'لوحة svcmaps',
  tabMap: 'الخريطة',
  tabAdmin: 'الإدارة',
  signIn: 'تسجيل الدخول',
  signOut: 'تسجيل الخروج',
  apiKey: 'مفتاح API',
  keyNote: 'يبقى المفتاح في هذا التبويب (تخزين الجلسة) ولا يُرسل إلا في ترويسة.',
  search: 'بحث',
  searchPlaceholder: 'ابحث عن مكان',
  whatsHere: 'ما الذي في وسط الخريطة؟',
  noResults: 'لا نتائج',
  map: 'الخريطة',
  directions: 'الاتجاهات',
  dirHint: 'انقر على الخريطة أو اختر نتيجة، ثم اجعلها نقطة البداية أو النهاية.',
  from: 'من',
  to: 'إلى',
  clear: 'مسح',
  fromHere: 'الاتجاهات من هنا',
  toHere: 'الاتجاهات إلى هنا',
  addStop: 'أضف كمحطة',
  stop: 'محطة',
  tooManyStops: 'أربع محطات على الأكثر.',
  legs: 'المراحل',
  straightLegs: 'بعض المراحل خطوط مستقيمة فقط (لم يُعثر على طريق في الوقت المحدد)؛ وهي ليست طرقًا.',
  routing: 'جارٍ البحث عن طريق…',
  route: 'الطريق',
  alternative: 'بديل',
  straight: 'خط مستقيم فقط: لم يُعثر على طريق في الوقت المحدد. هذا ليس طريقًا؛ أعد المحاولة بعد قليل.',
  maneuvers: 'المناورات',
  clickedPoint: 'نقطة على الخريطة',
  noAddress: 'لا يوجد عنوان هنا',
  address: 'العنوان',
  category: 'الفئة',
  phone: 'الهاتف',
  website: 'الموقع',
  photoOf: 'صورة',
  keys: 'مفاتيح API',
  name: 'الاسم',
  plan: 'الخطة',
  role: 'الدور',
  perMinute: 'في الدقيقة',
  daily: 'الحصة اليومية',
  state: 'الحالة',
  created: 'أُنشئ',
  create: 'إنشاء مفتاح',
  revoke: 'إلغاء',
  revokeOf: 'إلغاء المفتاح',
  newKey: 'مفتاح جديد (يظهر مرة واحدة، انسخه الآن):',
  usage: 'الاستخدام اليوم',
  requests: 'الطلبات',
  misses: 'الإخفاقات (جمع / بلاطات)',
  used: 'المستهلك من الحصة',
  lastSeen: 'آخر ظهور',
  status: 'حالة الخادم',
  refresh: 'تحديث',
  error: 'حدث خطأ ما',
  errors: {
    MISSING_TOKEN: 'أدخل مفتاح API.',
    INVALID_API_KEY: 'مفتاح API هذا غير صالح.',
    API_KEY_EXPIRED: 'انتهت صلاحية مفتاح API هذا.',
    API_KEY_REVOKED: 'أُلغي مفتاح API هذا.',
    TOKEN_EXPIRED: 'انتهت جلسة الخريطة؛ جارٍ تجديدها.',
    RATE_LIMIT_EXCEEDED: 'طلبات كثيرة جدًا: تجاوزت حد المعدل. انتظر قليلًا ثم أعد المحاولة.',
    MAPS_QUOTA_EXCEEDED: 'استُنفدت الحصة اليومية لهذا المفتاح؛ تتجدد عند منتصف الليل بالتوقيت العالمي.',
    INSUFFICIENT_ROLE: 'لا يملك هذا المفتاح صلاحية ذلك (super_admin فقط).',
    MAPS_UNAVAILABLE: 'محرك الخرائط متوقف على هذا الخادم.',
    DIRECTIONS_UNROUTABLE: 'لا يوجد طريق بين هاتين النقطتين.',
    SAME_POINT: 'نقطتا البداية والنهاية متطابقتان.',
    BACKPRESSURE: 'الخادم مشغول؛ أعد المحاولة بعد ثوانٍ.',
    UNAVAILABLE: 'هذه الخدمة غير متاحة الآن.',
    DISABLED: 'هذه الميزة متوقفة على هذا الخادم.',
    VALIDATION_ERROR: 'الطلب غير صالح.',
    KEY_NOT_FOUND: 'لا يوجد مفتاح بهذا المعرّف.',
    NETWORK: 'تعذّر الوصول إلى الخادم.',
  },
};

export type Key = Exclude<keyof typeof EN, 'errors'>;
const LANG_KEY = 'svcmaps.lang';
let lang: Lang = localStorage.getItem(LANG_KEY) === 'ar' ? 'ar' : 'en';
const listeners: Array<() => void> = [];

export const currentLang = (): Lang => lang;
export const t = (k: Key): string => (lang === 'ar' ? AR : EN)[k];

/** A readable message for an API error code, in the chosen language (families share one message). */
export function errorText(code: string, fallback?: string): string {
  const table = (lang === 'ar' ? AR : EN).errors;
  const family = /_(BACKPRESSURE|UNAVAILABLE|DISABLED)$/.exec(code)?.[1];
  return table[code] ?? (family ? table[family] : undefined) ?? fallback ?? t('error');
}

export function onLangChange(f: () => void): void {
  listeners.push(f);
}

export function setLang(next: Lang): void {
  lang = next;
  localStorage.setItem(LANG_KEY, next);
  applyLang();
  for (const f of listeners) f();
}

/** Sets lang/dir on the document and fills every element marked data-i18n (text) or data-i18n-label (aria-label). */
export function applyLang(root: ParentNode = document): void {
  document.documentElement.lang = lang;
  document.documentElement.dir = lang === 'ar' ? 'rtl' : 'ltr';
  for (const el of root.querySelectorAll<HTMLElement>('[data-i18n]')) el.textContent = t(el.dataset.i18n as Key);
  for (const el of root.querySelectorAll<HTMLElement>('[data-i18n-label]'))
    el.setAttribute('aria-label', t(el.dataset.i18nLabel as Key));
  for (const el of root.querySelectorAll<HTMLInputElement>('[data-i18n-placeholder]'))
    el.placeholder = t(el.dataset.i18nPlaceholder as Key);
}
