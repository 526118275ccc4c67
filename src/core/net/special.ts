import ipaddr from 'ipaddr.js';
import { ipv4RangeMatcher, type ParsedAddress } from './address.js';
import type { ReverseBlock } from './reverse.js';

type RangeEntry = [ipaddr.IPv4, number];
type Range6Entry = [ipaddr.IPv6, number];

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

function isRangeList<T>(entry: T | T[]): entry is T[] {
  return Array.isArray((entry as unknown[])[0]);
}

/** ipaddr.js's IPv6 special-use table, each block with the name `range()` gives it. */
function specialRanges6OfIpaddr(): [string, Range6Entry][] {
  const table: unknown = (ipaddr.IPv6.prototype as unknown as { SpecialRanges?: unknown }).SpecialRanges;
  if (typeof table !== 'object' || table === null) throw new Error('ipaddr.js no longer has IPv6.prototype.SpecialRanges');
  return Object.entries(table as Record<string, Range6Entry | Range6Entry[]>).flatMap(([name, entry]) => (isRangeList(entry) ? entry : [entry]).map((e): [string, Range6Entry] => [name, e]));
}

/** Every special-use block of both families with its range name, for the reverse-zone check (not a hot path). */
const SPECIAL_BLOCKS = {
  v4: Object.entries(specialRangesOfIpaddr()).flatMap(([name, entry]) => (isRangeList(entry) ? entry : [entry]).map((e): [string, RangeEntry] => [name, e])),
  v6: specialRanges6OfIpaddr(),
};

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

/**
 * What kind of special-use block a reverse zone belongs to, in words, or undefined when the block
 * is not wholly special-use: `10.in-addr.arpa` (10.0.0.0/8) is private-use, `192.in-addr.arpa`
 * (192.0.0.0/8) is not, though 192.168.0.0/16 lies inside it. A question about such a zone reads
 * a resolver's private reverse data (RFC 6303) as a PTR of a special-use address does.
 */
export function specialUseKindOfBlock(block: ReverseBlock): string | undefined {
  // An IPv4-mapped block (::ffff:0:0/96 and within) is judged as the IPv4 block it maps, as
  // parseAddress reads `::ffff:a.b.c.d` as IPv4 for every other rule: `::ffff:10.0.0.5` is
  // private-use, `::ffff:8.8.8.8` is not.
  if (block.bytes.length === 16 && block.bits >= 96 && block.bytes.slice(0, 10).every((b) => b === 0) && block.bytes[10] === 0xff && block.bytes[11] === 0xff) {
    return specialUseKindOfBlock({ bytes: block.bytes.slice(12), bits: block.bits - 96 });
  }
  const v4 = block.bytes.length === 4;
  const first = ipaddr.fromByteArray(block.bytes);
  const blocks: [string, [ipaddr.IPv4 | ipaddr.IPv6, number]][] = v4 ? SPECIAL_BLOCKS.v4 : SPECIAL_BLOCKS.v6;
  for (const [name, [network, bits]] of blocks) {
    if (bits <= block.bits && first.match(network, bits)) return SPECIAL_USE_WORDS[name] ?? `special-use (${name})`;
  }
  return undefined;
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
