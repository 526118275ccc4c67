import ipaddr from 'ipaddr.js';
import { ipv4RangeMatcher, type ParsedAddress } from './address.js';

/** Which peers' forwarding headers (and PROXY protocol headers) are believed. */
export interface TrustPolicy {
  trusts(address: ParsedAddress): boolean;
  /** True when at least one range is trusted. */
  readonly any: boolean;
}

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

const LOOPBACK: Range[] = [ipaddr.parseCIDR('127.0.0.0/8'), ipaddr.parseCIDR('::1/128')];

/**
 * Parses `NETDIAG_TRUST_PROXY`: comma-separated CIDRs, bare addresses, or the word `loopback`.
 * Throws a plain Error naming the bad entry; the caller decides how to report it.
 */
export function parseTrustList(value: string): TrustPolicy {
  const ranges: Range[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (entry === '') throw new Error('empty entry');
    if (entry === 'loopback') {
      ranges.push(...LOOPBACK);
      continue;
    }
    try {
      if (entry.includes('/')) {
        ranges.push(ipaddr.parseCIDR(entry));
      } else {
        const addr = ipaddr.parse(entry);
        ranges.push([addr, addr.kind() === 'ipv4' ? 32 : 128]);
      }
    } catch {
      throw new Error(`"${entry}" is not a CIDR, an IP address or "loopback"`);
    }
  }
  return trustRanges(ranges);
}

function trustRanges(ranges: Range[]): TrustPolicy {
  const inV4 = ipv4RangeMatcher(ranges.filter((r): r is [ipaddr.IPv4, number] => r[0].kind() === 'ipv4'));
  const v6 = ranges.filter((r): r is [ipaddr.IPv6, number] => r[0].kind() === 'ipv6');
  return {
    any: ranges.length > 0,
    trusts(address) {
      const value = address.v4;
      if (value !== undefined) return inV4(value);
      const a = address.addr as ipaddr.IPv6;
      return v6.some((r) => a.match(r));
    },
  };
}

/** Trusts nobody: forwarding headers are ignored (the default). */
export const TRUST_NONE: TrustPolicy = trustRanges([]);
