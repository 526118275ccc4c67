import ipaddr from 'ipaddr.js';
import { ipv4RangeMatcher, type ParsedAddress } from './address.js';

type RangeEntry = [ipaddr.IPv4, number];

/**
 * ipaddr.js's own table of IPv4 special-use ranges (the one `range()` walks, with an object
 * match per entry), as numbers: the walk cost more than the rest of a cached DNS request. The
 * table is left out of the library's typings, so its shape is checked here at load, and
 * special.test.ts compares the result with `range()` itself.
 */
const isSpecialIpv4 = ipv4RangeMatcher(Object.values(specialRangesOfIpaddr()).flatMap((entry) => (isRangeList(entry) ? entry : [entry])));

function specialRangesOfIpaddr(): Record<string, RangeEntry | RangeEntry[]> {
  const table: unknown = (ipaddr.IPv4.prototype as unknown as { SpecialRanges?: unknown }).SpecialRanges;
  if (typeof table !== 'object' || table === null) throw new Error('ipaddr.js no longer has IPv4.prototype.SpecialRanges');
  return table as Record<string, RangeEntry | RangeEntry[]>;
}

function isRangeList(entry: RangeEntry | RangeEntry[]): entry is RangeEntry[] {
  return Array.isArray(entry[0]);
}

/**
 * Private, loopback, link-local, documentation, multicast, CGNAT, translation and other
 * special-use ranges (RFC 6890 registries, as ipaddr.js classifies them): anything but global
 * unicast. They get no network, no location and no reverse lookup (docs/api.md, "/v1/ip"); a PTR
 * query for them would only leak an internal address to the upstream (RFC 6303).
 */
export function isSpecialUse(address: ParsedAddress): boolean {
  const value = address.v4;
  if (value !== undefined) return isSpecialIpv4(value);
  return address.addr.range() !== 'unicast';
}
