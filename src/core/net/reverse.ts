// Reverse-lookup names of addresses (RFC 1035 §3.5, RFC 3596 §2.5): address facts, shared by
// the DNS route (a PTR question) and /v1/ip (the caller's own PTR).
import ipaddr from 'ipaddr.js';
import { ipv4Octets, type ParsedAddress } from './address.js';

/**
 * The reverse-lookup name of an address written as text: `d.c.b.a.in-addr.arpa` or the nibble
 * form under `ip6.arpa`; undefined when the text is not an IPv4 or IPv6 address.
 */
export function reverseNameOfText(input: string): string | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(input)) return ipv4ReverseName(ipaddr.IPv4.parse(input).octets);
  if (input.includes(':') && ipaddr.IPv6.isValid(input)) return ipv6ReverseName(ipaddr.IPv6.parse(input));
  return undefined;
}

/** The reverse-lookup name of an address already parsed (the caller of /v1/ip): no second parse. */
export function reverseNameOf(address: ParsedAddress): string {
  const value = address.v4;
  if (value === undefined) return ipv6ReverseName(address.addr as ipaddr.IPv6);
  return ipv4ReverseName(ipv4Octets(value));
}

function ipv4ReverseName(octets: readonly number[]): string {
  return `${octets[3] ?? 0}.${octets[2] ?? 0}.${octets[1] ?? 0}.${octets[0] ?? 0}.in-addr.arpa`;
}

function ipv6ReverseName(addr: ipaddr.IPv6): string {
  const nibbles = addr
    .toByteArray()
    .flatMap((byte) => [byte >> 4, byte & 0xf])
    .reverse()
    .map((n) => n.toString(16));
  return `${nibbles.join('.')}.ip6.arpa`;
}

/** The address block a name under `in-addr.arpa` or `ip6.arpa` lies in: its first address and prefix length. */
export interface ReverseBlock {
  /** The block's first address, its bytes (4 or 16) zero after the prefix. */
  bytes: number[];
  bits: number;
}

/** A label of an `in-addr.arpa` name that stands for an octet, as RFC 1035 §3.5 writes them (no leading zero). */
const OCTET_LABEL = /^(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
/** A nibble label of an `ip6.arpa` name (RFC 3596 §2.5): one hex digit, lower-case in a canonical name. */
const NIBBLE_LABEL = /^[0-9a-f]$/;

/**
 * The block of addresses whose reverse zone holds `name` (canonical: lower-case, no final dot),
 * or undefined for a name outside `in-addr.arpa` and `ip6.arpa`. The labels next to the suffix
 * that stand for octets or nibbles make the prefix; whatever stands left of them (a host label,
 * RFC 2317's `0/25`, a label with a leading zero) is still a name inside that prefix's zone, so
 * `x.0.0.10.in-addr.arpa` lies in 10.0.0.0/24 as `5.0.0.10.in-addr.arpa` lies in 10.0.0.5/32.
 */
export function reverseBlockOf(name: string): ReverseBlock | undefined {
  const v4 = name === 'in-addr.arpa' || name.endsWith('.in-addr.arpa');
  const v6 = name === 'ip6.arpa' || name.endsWith('.ip6.arpa');
  if (!v4 && !v6) return undefined;
  const labels = name.split('.').slice(0, -2).reverse();
  const bytes: number[] = new Array<number>(v4 ? 4 : 16).fill(0);
  let bits = 0;
  for (const label of labels) {
    if (v4) {
      if (bits === 32 || !OCTET_LABEL.test(label)) break;
      bytes[bits / 8] = Number(label);
      bits += 8;
    } else {
      if (bits === 128 || !NIBBLE_LABEL.test(label)) break;
      const index = Math.floor(bits / 8);
      bytes[index] = (bytes[index] ?? 0) | (Number.parseInt(label, 16) << (bits % 8 === 0 ? 4 : 0));
      bits += 4;
    }
  }
  return { bytes, bits };
}
