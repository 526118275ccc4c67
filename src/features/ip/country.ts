/**
 * English country names from ISO 3166-1 codes, from the runtime's own CLDR data (Intl), so no
 * table ships with the service. An unknown code gives null, never the code echoed back.
 */
const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** Names already asked for, by code: an ICU lookup costs microseconds, and there are fewer than 700 codes. */
const known = new Map<string, string | null>();

function lookUp(code: string): string | null {
  try {
    const name = names.of(code);
    return name === undefined || name === code ? null : name.slice(0, 100);
  } catch {
    return null;
  }
}

export function countryName(code: string | null): string | null {
  if (code === null) return null;
  let name = known.get(code);
  if (name === undefined) {
    name = lookUp(code);
    // Only well-formed codes are kept, so the map stays within the 676 two-letter ones.
    if (/^[A-Z]{2}$/.test(code)) known.set(code, name);
  }
  return name;
}
