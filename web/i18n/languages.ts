// The languages the page speaks, and which one a reader gets: the one they chose with the page's
// selector (kept in this browser), else the first of the browser's languages the page has (by
// its primary subtag, so `de-AT` reads German), else English. English is in the page's script;
// each other language's catalogue is fetched when a reader needs it (`/i18n/<code>.json`, built
// from web/i18n/<code>.ts by scripts/generate.mjs), so no reader downloads the other four.

export interface Language {
  /** BCP 47 tag, for `lang` and Intl. */
  code: string;
  /** The language's name in itself, as the selector lists it. */
  name: string;
  dir: 'ltr' | 'rtl';
}

export const LANGUAGES: readonly [Language, ...Language[]] = [
  { code: 'en', name: 'English', dir: 'ltr' },
  { code: 'de', name: 'Deutsch', dir: 'ltr' },
  { code: 'es', name: 'Español', dir: 'ltr' },
  { code: 'ja', name: '日本語', dir: 'ltr' },
  { code: 'ar', name: 'العربية', dir: 'rtl' },
];

/** Where the reader's own choice is kept in this browser (localStorage); never sent. */
export const LANGUAGE_KEY = 'netdiag.language';

const byCode = (code: string): Language | undefined => LANGUAGES.find((l) => l.code === code.toLowerCase().split('-')[0]);

/** The reader's language from their choice (if any) and the browser's list, in its order. */
export function chooseLanguage(chosen: string | null, preferred: readonly string[]): Language {
  if (chosen !== null) {
    const language = byCode(chosen);
    if (language !== undefined) return language;
  }
  for (const tag of preferred) {
    const language = byCode(tag);
    if (language !== undefined) return language;
  }
  return LANGUAGES[0];
}
