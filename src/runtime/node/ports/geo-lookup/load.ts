import type { AsnLookup, CityLookup } from '../../../../core/ports/geo-lookup.js';
import { ConfigError, type Config } from '../../adapter/config.js';
import { embeddedAsn } from './asn-table.js';
import { maxmindAsn } from './asn-mmdb.js';
import { maxmindCity } from './city-mmdb.js';
import { embeddedCityTable } from './city-table.js';

function opened<T>(variable: string, open: () => T): T {
  try {
    return open();
  } catch (err) {
    throw new ConfigError(variable, (err as Error).message);
  }
}

/** The geo data, read once at start-up: an operator's MaxMind files, else the embedded data. */
export function loadGeo(config: Pick<Config, 'geoipCity' | 'geoipAsn'>): { city: CityLookup; asn: AsnLookup; credits: string[] } {
  const cityPath = config.geoipCity;
  const asnPath = config.geoipAsn;
  return {
    city: cityPath === undefined ? embeddedCityTable() : opened('NETDIAG_GEOIP_CITY', () => maxmindCity(cityPath)),
    asn: asnPath === undefined ? embeddedAsn() : opened('NETDIAG_GEOIP_ASN', () => maxmindAsn(asnPath)),
    credits: embeddedCredits(cityPath === undefined, asnPath === undefined),
  };
}

/**
 * What the embedded data's licences ask to be credited where its answers are shown (README, "Data
 * sources and licences"): DB-IP Lite is CC BY 4.0, and so is the merged ASN table built from it;
 * the time zones come from OpenStreetMap boundaries (ODbL). An operator's MaxMind files carry
 * their own licence, which the operator answers for.
 */
function embeddedCredits(city: boolean, asn: boolean): string[] {
  return [
    ...(city ? ['IP geolocation by DB-IP (db-ip.com), CC BY 4.0', 'time zones from boundaries © OpenStreetMap contributors, ODbL'] : []),
    ...(asn ? ['network names from RouteViews and DB-IP (db-ip.com), CC BY 4.0'] : []),
  ];
}
