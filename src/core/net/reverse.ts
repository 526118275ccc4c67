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
