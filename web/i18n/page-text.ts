// The page's fixed words (web/index.html) in the reader's language, and the selector to change it.
// The language: `?lang=` in the address, else the one chosen here before (kept in this browser),
// else the browser's own list (web/i18n/languages.ts).
// Each fixed text in the HTML names its message (`data-i18n`; `data-i18n-initial` for a text a
// section replaces as it goes, such as a status line; `data-i18n-label` for an aria-label); the
// HTML's own words are the English ones, checked equal to the catalogue by
// test/page/catalogues.test.ts, so a page whose script fails still reads in English.
import { en, type Catalogue, type MessageKey } from './en.js';
import { chooseLanguage, LANGUAGE_KEY, LANGUAGES, type Language } from './languages.js';
import { addCatalogue, t } from './locale.js';

/** The reader's own choice: one in the address (`?lang=de`), else one this browser keeps, if it lets the page read it. */
function chosen(): string | null {
  const asked = new URLSearchParams(location.search).get('lang');
  if (asked !== null) return asked;
  try {
    return localStorage.getItem(LANGUAGE_KEY);
  } catch {
    return null;
  }
}

const isKey = (key: string | undefined): key is MessageKey => key !== undefined && key in en;

/**
 * A language's catalogue from this server (`/i18n/<code>.json`), checked to have every message
 * English has, each a string: a catalogue that does not is refused whole, with the reason.
 */
async function fetchCatalogue(code: string): Promise<Catalogue | string> {
  try {
    const res = await fetch(`/i18n/${code}.json`);
    if (!res.ok) return `the server answered ${String(res.status)}`;
    const body = (await res.json()) as unknown;
    if (typeof body !== 'object' || body === null) return 'it is not a catalogue';
    const missing = Object.keys(en).filter((key) => typeof (body as Record<string, unknown>)[key] !== 'string');
    return missing.length === 0 ? (body as Catalogue) : `it lacks ${String(missing.length)} messages (${missing.slice(0, 3).join(', ')}…)`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Every fixed text under `root` in the page's language. */
function translate(root: ParentNode): void {
  for (const element of root.querySelectorAll<HTMLElement>('[data-i18n], [data-i18n-initial]')) {
    const key = element.dataset.i18n ?? element.dataset.i18nInitial;
    if (isKey(key)) element.textContent = t(key);
  }
  for (const element of root.querySelectorAll<HTMLElement>('[data-i18n-label]')) {
    if (isKey(element.dataset.i18nLabel)) element.setAttribute('aria-label', t(element.dataset.i18nLabel));
  }
}

/**
 * Sets the page's language (its `lang` and, for Arabic, right-to-left `dir`) before any section
 * writes a word, its catalogue fetched first, puts the fixed texts in it, and fills the selector.
 * A catalogue that cannot be had leaves the page in English and says why (in English, the one
 * language at hand). A choice is kept in this browser and the page reloads in it: every section
 * then writes in the new language from the start (a test or a watch running is stopped by the
 * reload; the history is kept).
 */
export async function setUpLanguage(): Promise<void> {
  let found: Language = chooseLanguage(chosen(), navigator.languages);
  if (found.code !== 'en') {
    const catalogue = await fetchCatalogue(found.code);
    if (typeof catalogue === 'string') {
      const error = document.querySelector<HTMLElement>('#language-error');
      if (error !== null) {
        error.textContent = `The page's ${found.name} texts could not be loaded (${catalogue}); it is shown in English.`;
        error.hidden = false;
      }
      found = LANGUAGES[0];
    } else addCatalogue(found.code, catalogue);
  }
  document.documentElement.lang = found.code;
  document.documentElement.dir = found.dir;
  translate(document);
  const select = document.querySelector<HTMLSelectElement>('#language');
  if (select === null) return;
  select.replaceChildren(
    ...LANGUAGES.map((l) => {
      const option = document.createElement('option');
      option.value = l.code;
      option.lang = l.code;
      option.textContent = l.name;
      return option;
    }),
  );
  select.value = found.code;
  select.addEventListener('change', () => {
    const url = new URL(location.href);
    try {
      localStorage.setItem(LANGUAGE_KEY, select.value);
      url.searchParams.delete('lang');
    } catch {
      // Storage refused: the choice rides in the address instead.
      url.searchParams.set('lang', select.value);
    }
    // A reload keeps a shared result's fragment (#r=…) as it is.
    location.assign(url.href);
  });
}
