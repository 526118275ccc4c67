// The IANA time zone at a point, for the embedded DB-IP Lite data, which has coordinates but no
// zone. @photostructure/tz-lookup (CC0) is an offline, 100 kB grid of the world's
// zone boundaries: about 20 ns a lookup, exact away from borders and coarse near them, which
// suits coordinates that are themselves a city's approximate position (README, Data sources).
// Build time only: the zone is compiled into each city record (city-compile.ts).
import tzLookup from '@photostructure/tz-lookup';

/** The zone at the coordinates, or null without them (or for coordinates the grid refuses). */
export function zoneAt(latitude: number | null, longitude: number | null): string | null {
  if (latitude === null || longitude === null) return null;
  try {
    return tzLookup(latitude, longitude);
  } catch {
    return null;
  }
}
