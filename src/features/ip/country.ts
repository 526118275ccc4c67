import { COUNTRY_NAMES } from '../../generated/country-names.js';

/**
 * English country names from ISO 3166-1 codes: CLDR's, as the building Node's Intl gives them,
 * written into a table at build time (scripts/generate.mjs says why not at run time). An unknown
 * code gives null, never the code echoed back.
 */
export function countryName(code: string | null): string | null {
  if (code === null || !Object.hasOwn(COUNTRY_NAMES, code)) return null;
  return COUNTRY_NAMES[code] ?? null;
}
