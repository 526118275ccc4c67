import type { ParsedAddress } from './address.js';

/**
 * Private, loopback, link-local, documentation, multicast, CGNAT, translation and other
 * special-use ranges (RFC 6890 registries, as ipaddr.js classifies them): anything but global
 * unicast. They get no network, no location and no reverse lookup (SPEC-NOTES, /v1/ip); a PTR
 * query for them would only leak an internal address to the upstream (RFC 6303).
 */
export function isSpecialUse(address: ParsedAddress): boolean {
  return (address.addr).range() !== 'unicast';
}
