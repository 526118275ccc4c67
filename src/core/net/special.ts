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

/**
 * What kind of special-use address this is, in words for a reader ("private-use", "loopback", …),
 * or undefined for a global unicast one. Off the hot path: only an answer that says why an address
 * has no location asks.
 */
export function specialUseKind(address: ParsedAddress): string | undefined {
  if (!isSpecialUse(address)) return undefined;
  const range = address.addr.range();
  return SPECIAL_USE_WORDS[range] ?? `special-use (${range})`;
}

/** ipaddr.js's range names (RFC 6890 registries) as a reader would say them. */
const SPECIAL_USE_WORDS: Readonly<Record<string, string>> = {
  private: 'private-use (RFC 1918)',
  loopback: 'loopback',
  linkLocal: 'link-local',
  uniqueLocal: 'unique local (RFC 4193)',
  carrierGradeNat: 'shared address space for carrier-grade NAT (RFC 6598)',
  multicast: 'multicast',
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  reserved: 'reserved',
  benchmarking: 'benchmarking (RFC 2544)',
  amt: 'AMT (RFC 7450)',
  as112: 'AS112 (RFC 7535)',
  as112v6: 'AS112 (RFC 7535)',
  deprecatedSiteLocal: 'site-local (deprecated)',
  deprecatedOrchid: 'ORCHID (deprecated)',
  orchid2: 'ORCHIDv2 (RFC 7343)',
  segmentRouting: 'segment routing (RFC 9602)',
  droneRemoteIdProtocolEntityTags: 'drone remote ID (RFC 9374)',
  teredo: 'Teredo (RFC 4380)',
  '6to4': '6to4 (RFC 3056)',
  rfc6145: 'IPv4-translated (RFC 6145)',
  rfc6052: 'IPv4/IPv6 translation (RFC 6052)',
  ipv4Mapped: 'IPv4-mapped',
  discard: 'discard-only (RFC 6666)',
};
