// Every language's catalogue as the suites read it (the page has English in its script and
// fetches the others; the tests check each directly).
import { ar } from '../../web/i18n/ar.js';
import { de } from '../../web/i18n/de.js';
import { en, type Catalogue } from '../../web/i18n/en.js';
import { es } from '../../web/i18n/es.js';
import { ja } from '../../web/i18n/ja.js';

export const CATALOGUES: Readonly<Record<string, Catalogue>> = { en, de, es, ja, ar };

/** A language's catalogue; a language without one is a fault of the test's list. */
export function catalogue(code: string): Catalogue {
  const found = CATALOGUES[code];
  if (found === undefined) throw new Error(`no catalogue for ${code}`);
  return found;
}
