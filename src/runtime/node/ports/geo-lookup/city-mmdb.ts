import type { ParsedAddress } from '../../../../core/net/address.js';
import { coordinate, countryCode, text, type CityLookup } from '../../../../core/ports/geo-lookup.js';
import { openMmdb } from './mmdb.js';

type Record = globalThis.Record<string, unknown>;

const english = (node: unknown): unknown => (node as { names?: { en?: unknown } } | undefined)?.names?.en;

/** MaxMind GeoIP2/GeoLite2 City: nested objects with localised names. */
function fromMaxmind(r: Record) {
  const location = r.location as { latitude?: unknown; longitude?: unknown; time_zone?: unknown } | undefined;
  const subdivisions = r.subdivisions as unknown[] | undefined;
  return {
    city: text(english(r.city), 100),
    region: text(english(subdivisions?.[0]), 100),
    country_code: countryCode((r.country as { iso_code?: unknown } | undefined)?.iso_code),
    postal_code: text((r.postal as { code?: unknown } | undefined)?.code, 32),
    timezone: text(location?.time_zone, 64),
    latitude: coordinate(location?.latitude, 90),
    longitude: coordinate(location?.longitude, 180),
  };
}

/** An operator's MaxMind City file (`NETDIAG_GEOIP_CITY`), read whole; one file holds both IP versions. */
export function maxmindCity(path: string): CityLookup {
  const db = openMmdb(path);
  if (!/city/i.test(db.databaseType)) throw new Error(`"${path}" is a ${db.databaseType} database, not a City database`);
  return {
    city(address: ParsedAddress) {
      const record = db.get(address);
      return record === undefined ? undefined : fromMaxmind(record);
    },
  };
}
