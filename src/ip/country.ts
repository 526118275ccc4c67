/**
 * English country names from ISO 3166-1 codes, from the runtime's own CLDR data (Intl), so no
 * table ships with the service. An unknown code gives null, never the code echoed back.
 */
const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

export function countryName(code: string | null): string | null {
  if (code === null) return null;
  try {
    const name = names.of(code);
    return name === undefined || name === code ? null : name.slice(0, 100);
  } catch {
    return null;
  }
}
