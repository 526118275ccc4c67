import type { AsnLookup, CityLookup } from '../../../net/geo.js';
import { ConfigError, type Config } from '../config.js';
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
export function loadGeo(config: Pick<Config, 'geoipCity' | 'geoipAsn'>): { city: CityLookup; asn: AsnLookup } {
  const cityPath = config.geoipCity;
  const asnPath = config.geoipAsn;
  return {
    city: cityPath === undefined ? embeddedCityTable() : opened('NETDIAG_GEOIP_CITY', () => maxmindCity(cityPath)),
    asn: asnPath === undefined ? embeddedAsn() : opened('NETDIAG_GEOIP_ASN', () => maxmindAsn(asnPath)),
  };
}
