import { coordinate, countryCode, text } from '../../../core/ports/geo-lookup.js';
import type { ConnectionFacts } from '../../../core/http/connection.js';

/** The fields of `request.cf` read here; any may be absent, and none is trusted to be well-formed. */
interface CfFields {
  asn?: unknown;
  asOrganization?: unknown;
  colo?: unknown;
  httpProtocol?: unknown;
  tlsVersion?: unknown;
  city?: unknown;
  region?: unknown;
  country?: unknown;
  postalCode?: unknown;
  timezone?: unknown;
  latitude?: unknown;
  longitude?: unknown;
}

const HTTP_PROTOCOLS = new Set(['HTTP/1.0', 'HTTP/1.1', 'HTTP/2', 'HTTP/3']);
const TLS_VERSION = /^TLSv1(?:\.[0-3])?$/;
const COLO = /^[A-Z]{3}$/;
/** An IANA zone name: `Area/Location`, or `UTC`-like single names. */
const TIME_ZONE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

/** `latitude` and `longitude` arrive as strings ("30.27130"): made numbers, bounded, rounded. */
function degrees(value: unknown, bound: number): number | null {
  if (typeof value !== 'string' || value.trim() === '') return coordinate(value, bound);
  return coordinate(Number(value), bound);
}

/** A 32-bit AS number (RFC 6793), or null; 0 is reserved and means unknown. */
function asn(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= 0xffff_ffff ? value : null;
}

/**
 * The connection as the edge observed it (docs/api.md, "/v1/ip": "On Workers the caller is
 * `CF-Connecting-IP`, set by the platform, and connection facts, location and network come from
 * `request.cf`"). The caller is that header alone: forwarding headers are never read. `cf` may be
 * partial or missing (a request from a Service binding, or a test): absent fields are null.
 */
export function workersConnection(request: Request): ConnectionFacts {
  const cf = (request.cf ?? {}) as CfFields;
  const protocol = typeof cf.httpProtocol === 'string' && HTTP_PROTOCOLS.has(cf.httpProtocol) ? cf.httpProtocol : null;
  // Over plain HTTP nothing was negotiated: the platform sends "" for tlsVersion, and local
  // development (miniflare's placeholder `cf`) says TLSv1.3 whatever the scheme, so the request's
  // own scheme decides first.
  const overTls = request.url.startsWith('https:');
  const tls = overTls && typeof cf.tlsVersion === 'string' && TLS_VERSION.test(cf.tlsVersion) ? cf.tlsVersion : null;
  const zone = text(cf.timezone, 64);
  return {
    peerAddress: request.headers.get('cf-connecting-ip') ?? undefined,
    httpProtocol: protocol,
    tlsVersion: tls,
    edge: {
      colo: typeof cf.colo === 'string' && COLO.test(cf.colo) ? cf.colo : null,
      location: {
        city: text(cf.city, 100),
        region: text(cf.region, 100),
        // `T1` (Tor) and `XX` (unknown) are not ISO 3166-1 countries: neither is reported.
        country_code: cf.country === 'XX' ? null : countryCode(cf.country),
        postal_code: text(cf.postalCode, 32),
        timezone: zone !== null && TIME_ZONE.test(zone) ? zone : null,
        latitude: degrees(cf.latitude, 90),
        longitude: degrees(cf.longitude, 180),
      },
      network: { asn: asn(cf.asn), organization: text(cf.asOrganization, 160) },
    },
  };
}
