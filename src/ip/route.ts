import { reverseNameOf } from '../net/reverse.js';
import type { DnsResult } from '../dns/types.js';
import { CACHE } from '../http/headers.js';
import { Problem } from '../http/problems.js';
import type { Handler } from '../http/types.js';
import { envelope } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { EdgeFacts } from '../http/connection.js';
import type { Resolver } from '../dns/resolver.js';
import type { ParsedAddress } from '../net/address.js';
import { callerOf, type CallerRule } from '../http/caller.js';
import { countryName } from './country.js';
import { NO_LOCATION, NO_NETWORK, type AsnLookup, type CityLookup, type LocationInformation, type NetworkInformation } from '../net/geo.js';
import { hostnameOrNull } from './hostname.js';
import { isSpecialUse } from '../net/special.js';

/** A short deadline for the caller's PTR: /v1/ip must not wait on a slow reverse zone. */
const REVERSE_DEADLINE_MS = 500;

/** Key order follows the spec's tables, so responses read the way the documentation does. */
function locationOf(found: Omit<LocationInformation, 'country'>): LocationInformation {
  return {
    city: found.city,
    region: found.region,
    country: countryName(found.country_code),
    country_code: found.country_code,
    postal_code: found.postal_code,
    timezone: found.timezone,
    latitude: found.latitude,
    longitude: found.longitude,
  };
}

/** The first PTR answer's target as a host name, or null (docs/api.md, "/v1/ip"). */
function hostnameOf(result: DnsResult): string | null {
  for (const answer of result.answers) if (answer.type === 'PTR') return hostnameOrNull(answer.target);
  return null;
}

interface CallerFacts {
  location: LocationInformation;
  network: NetworkInformation;
  colo: string | null;
}

/**
 * On an edge runtime the platform's observation of the connection is the answer (the API contract
 * rule 4): it saw where the caller came in, so its view is not looked up again, nor blanked for
 * an address our special-use table would skip (the platform only sends what it observed).
 */
function observed(edge: EdgeFacts): CallerFacts {
  return { location: locationOf(edge.location), network: edge.network, colo: edge.colo };
}

/** What /v1/ip reads: the caller rule, our own location and network data, the resolver for PTR. */
interface IpRouteNeeds extends CallerRule {
  geo: { city: CityLookup; asn: AsnLookup };
  dns: Resolver;
  colo: string | null;
}

export function ipRoute(services: IpRouteNeeds): RouteDefinition {
  /** Our own data: special-use addresses get nothing (docs/api.md, "/v1/ip"), public ones a lookup. */
  const lookedUp = (address: ParsedAddress): CallerFacts => {
    if (isSpecialUse(address)) return { location: NO_LOCATION, network: NO_NETWORK, colo: services.colo };
    const city = services.geo.city.city(address);
    return {
      location: city === undefined ? NO_LOCATION : locationOf(city),
      network: services.geo.asn.asn(address) ?? NO_NETWORK,
      colo: services.colo,
    };
  };

  /**
   * The caller's PTR through the fixed resolver, never through the shared cache; null on any
   * failure. Requests from one address while its lookup is in flight share the query (the
   * resolver coalesces identical uncached questions and keeps nothing once the answer comes).
   */
  const reverseHostname = (address: ParsedAddress): Promise<string | null> =>
    services.dns.resolveUncached(reverseNameOf(address), 'PTR', REVERSE_DEADLINE_MS).then(hostnameOf, () => null);

  const handler: Handler = (ctx) => {
    const caller = callerOf(ctx, services);
    if (!caller.ok) {
      throw new Problem('connection_unavailable', `The caller's address cannot be established: ${caller.reason}.`);
    }
    const address = caller.address;
    const connection = ctx.req.connection();
    const { location, network, colo } = connection.edge === undefined ? lookedUp(address) : observed(connection.edge);
    const reply = (reverse: string | null) =>
      envelope(
        ctx,
        {
          address: address.text,
          ip_version: address.version,
          reverse_hostname: reverse,
          network,
          location,
          connection: {
            provider_colo: colo,
            // Behind a proxy that forwards by header, this connection is the proxy's hop: its
            // protocol and TLS are not the caller's, and the header says nothing of them.
            // PROXY protocol v2 carries the caller's own (its ALPN and SSL TLVs).
            http_protocol: caller.forwarded ? null : connection.httpProtocol,
            tls_version: caller.forwarded ? null : connection.tlsVersion,
          },
          data_provenance: 'observed_connection',
        },
        CACHE.noStore,
      );
    // Every caller's PTR is asked, special-use addresses included (docs/api.md, "/v1/ip"): on a
    // private network the operator's resolver is the one that knows its reverse zones.
    return reverseHostname(address).then(reply);
  };

  // Query parameters are ignored: nothing a caller sends can name another address (docs/api.md).
  return { path: '/v1/ip', GET: { limit: 'ip', handle: handler } };
}
