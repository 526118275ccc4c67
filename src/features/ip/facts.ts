// What netdiag knows of a caller, the one source for /v1/ip, /json and the text answers for curl
// (/ip, /country, …): each asks only for what it prints, so `/ip` takes no lookup and only
// `/hostname` and the whole object wait for the PTR.
import { reverseNameOf } from '../../core/net/reverse.js';
import type { DnsResult } from '../../common/dns-types.js';
import { Problem } from '../../core/http/problems.js';
import type { RequestContext } from '../../core/http/types.js';
import type { EdgeFacts } from '../../core/http/connection.js';
import type { Resolver } from '../../engines/dns/resolver.js';
import type { ParsedAddress } from '../../core/net/address.js';
import { callerOf, type CallerRule } from '../../core/http/caller.js';
import type { Schemas } from '../../generated/openapi-types.js';
import { countryName } from './country.js';
import { NO_LOCATION, NO_NETWORK, type AsnLookup, type CityLookup, type LocationInformation, type NetworkInformation } from '../../core/ports/geo-lookup.js';
import { hostnameOrNull } from './hostname.js';
import { isSpecialUse } from '../../core/net/special.js';

/** The /v1/ip object as the contract (openapi/openapi.yaml) defines it. */
export type CallerIpData = Schemas['CallerIpData'];

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

/** Where the caller is and whose network it came from, and the edge that saw it. */
export interface CallerPlace {
  location: LocationInformation;
  network: NetworkInformation;
  colo: string | null;
}

/**
 * On an edge runtime the platform's observation of the connection is the answer (the API contract
 * rule 4): it saw where the caller came in, so its view is not looked up again, nor blanked for
 * an address our special-use table would skip (the platform only sends what it observed).
 */
function observed(edge: EdgeFacts): CallerPlace {
  return { location: locationOf(edge.location), network: edge.network, colo: edge.colo };
}

/** What the facts read: the caller rule, our own location and network data, the resolver for PTR. */
interface IpFactsNeeds extends CallerRule {
  geo: { city: CityLookup; asn: AsnLookup; anyAddress?: boolean };
  dns: Resolver;
  colo: string | null;
  /** Whether `?ip=` asks for a special-use address's PTR (OperatorOptions.specialUsePtr). */
  specialUsePtr: boolean;
}

export interface IpFacts {
  /** The caller's address by the /v1/ip rule; a `connection_unavailable` Problem when there is none. */
  address(ctx: RequestContext): { address: ParsedAddress; forwarded: boolean };
  /** Location, network and edge: our own data, or the edge runtime's observation. */
  place(ctx: RequestContext, address: ParsedAddress): CallerPlace;
  /**
   * Another address's location and network from our own data (`?ip=`), never the edge's view of
   * the caller. Ask only where `othersKnown`: elsewhere our own data is empty.
   */
  placeOf(address: ParsedAddress): CallerPlace;
  /** Whether this deployment has data of its own to look another address up in (not on Workers). */
  othersKnown: boolean;
  /** The caller's PTR through the fixed resolver, null on any failure or none. */
  hostname(address: ParsedAddress): Promise<string | null>;
  /** Another address's PTR (`?ip=`), through the shared cache; null on any failure or none. */
  hostnameOfOther(address: ParsedAddress): Promise<string | null>;
  /** All of it: the /v1/ip object. */
  all(ctx: RequestContext): Promise<CallerIpData>;
}

export function ipFacts(needs: IpFactsNeeds): IpFacts {
  const address = (ctx: RequestContext) => {
    const caller = callerOf(ctx, needs);
    if (!caller.ok) throw new Problem('connection_unavailable', `The caller's address cannot be established: ${caller.reason}.`);
    return { address: caller.address, forwarded: caller.forwarded };
  };

  /** Our own data: special-use addresses get nothing (docs/api.md, "/v1/ip"), public ones a lookup. */
  const lookedUp = (found: ParsedAddress): CallerPlace => {
    if (isSpecialUse(found)) return { location: NO_LOCATION, network: NO_NETWORK, colo: needs.colo };
    const city = needs.geo.city.city(found);
    return {
      location: city === undefined ? NO_LOCATION : locationOf(city),
      network: needs.geo.asn.asn(found) ?? NO_NETWORK,
      colo: needs.colo,
    };
  };

  const place = (ctx: RequestContext, found: ParsedAddress): CallerPlace => {
    const edge = ctx.req.connection().edge;
    return edge === undefined ? lookedUp(found) : observed(edge);
  };

  /**
   * Through the fixed resolver, never through the shared cache. Requests from one address while
   * its lookup is in flight share the query (the resolver coalesces identical uncached questions
   * and keeps nothing once the answer comes). Every caller's PTR is asked, special-use addresses
   * included (docs/api.md, "/v1/ip"): on a private network the operator's resolver is the one
   * that knows its reverse zones.
   */
  const hostname = (found: ParsedAddress): Promise<string | null> =>
    needs.dns.resolveUncached(reverseNameOf(found), 'PTR', REVERSE_DEADLINE_MS).then(hostnameOf, () => null);

  /**
   * `?ip=` names an address that is not the caller's: its PTR goes through the shared TTL cache
   * (a name asked again is answered from it, and a burst of dead reverse zones spends the general
   * budget under the `dns` limit, never the callers' own share of uncached lookups).
   * A special-use address is not asked about unless the operator says so: the resolver may hold
   * private reverse zones (RFC 6303) that are nobody else's business.
   */
  const hostnameOfOther = (found: ParsedAddress): Promise<string | null> => {
    if (!needs.specialUsePtr && isSpecialUse(found)) return Promise.resolve(null);
    return Promise.resolve(needs.dns.resolve(reverseNameOf(found), 'PTR')).then(({ result }) => hostnameOf(result), () => null);
  };

  const all = (ctx: RequestContext): Promise<CallerIpData> => {
    const caller = address(ctx);
    const connection = ctx.req.connection();
    const { location, network, colo } = place(ctx, caller.address);
    return hostname(caller.address).then((reverse) => ({
      address: caller.address.text,
      ip_version: caller.address.version,
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
    }));
  };

  return { address, place, placeOf: lookedUp, othersKnown: needs.geo.anyAddress !== false, hostname, hostnameOfOther, all };
}
