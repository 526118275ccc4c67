import { text, type AsnLookup } from '../../../../core/ports/geo-lookup.js';
import { openMmdb } from './mmdb.js';

/** An operator's MaxMind GeoLite2/GeoIP2 ASN file (`NETDIAG_GEOIP_ASN`). */
export function maxmindAsn(path: string): AsnLookup {
  const db = openMmdb(path);
  if (!/asn/i.test(db.databaseType)) throw new Error(`"${path}" is a ${db.databaseType} database, not an ASN database`);
  return {
    asn(address) {
      const record = db.get(address);
      if (record === undefined) return undefined;
      const asn = record.autonomous_system_number;
      return {
        asn: typeof asn === 'number' && Number.isInteger(asn) && asn >= 0 && asn <= 4_294_967_295 ? asn : null,
        organization: text(record.autonomous_system_organization, 160),
      };
    },
  };
}
