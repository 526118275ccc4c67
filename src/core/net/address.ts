import ipaddr from 'ipaddr.js';

type IpVersion = 'ipv4' | 'ipv6';

export interface ParsedAddress {
  /** Canonical text: dotted quad for IPv4, RFC 5952 compressed lower-case for IPv6. */
  text: string;
  version: IpVersion;
  addr: ipaddr.IPv4 | ipaddr.IPv6;
  /**
   * IPv4 as an unsigned 32-bit number, for range checks that build no objects (trust, special
   * use, ASN): ipaddr.js's `match` costs a parse and an object per call. Undefined for IPv6.
   */
  v4: number | undefined;
}

/** Most requests need only the text of an IPv4 peer (the rate-limit source): parse on demand. */
class LazyIPv4 implements ParsedAddress {
  readonly version = 'ipv4';
  readonly v4: number;
  #addr: ipaddr.IPv4 | undefined;
  constructor(readonly text: string) {
    this.v4 = dottedQuadValue(text);
  }
  get addr(): ipaddr.IPv4 {
    return (this.#addr ??= new ipaddr.IPv4(ipv4Octets(this.v4)));
  }
}

/** The number of a dotted quad already checked against DOTTED_QUAD. */
function dottedQuadValue(text: string): number {
  let value = 0;
  let octet = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      value = value * 256 + octet;
      octet = 0;
    } else octet = octet * 10 + (c - 0x30);
  }
  return value * 256 + octet;
}

/** An ipaddr.js IPv4 as an unsigned 32-bit number. */
function ipv4Value(addr: ipaddr.IPv4): number {
  const [a = 0, b = 0, c = 0, d = 0] = addr.octets;
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** The four octets of an IPv4 number, most significant first. */
export function ipv4Octets(value: number): number[] {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

/**
 * A test of IPv4 numbers against CIDR ranges (trust lists, special-use ranges), converted once
 * so that a check builds no object: ipaddr.js's `match` parses and allocates on every call.
 */
export function ipv4RangeMatcher(ranges: readonly (readonly [ipaddr.IPv4, number])[]): (value: number) => boolean {
  const numeric = ranges.map(([network, bits]) => ({ network: ipv4Value(network), bits }));
  return (value) => {
    for (const { network, bits } of numeric) {
      // Shifting by 32 is a no-op in JavaScript, so /0 is its own case.
      if (bits === 0 || (value ^ network) >>> (32 - bits) === 0) return true;
    }
    return false;
  };
}

/** Dotted-quad IPv4 without leading zeros: parsed by hand, the hottest case of all. */
const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;

/**
 * `::a.b.c.d`, the IPv4-compatible form written with a dotted tail: ipaddr.js parses it as if it
 * were IPv4-mapped (`::ffff:a.b.c.d`), so it must be recognised by its text.
 */
const COMPATIBLE_DOTTED = /^::(?:[0-9]+\.){3}[0-9]+$/;

/** A zone index as an operating system writes one: an interface name or number. */
const ZONE = /^[\x21-\x7e]{1,64}$/;

/**
 * IPv4-compatible IPv6 (`::a.b.c.d`, `::808:808`: the first 96 bits zero), deprecated by
 * RFC 4291 §2.5.5.1 and used by no transition mechanism, so no connection comes from one; `::`
 * and `::1` share the prefix but are the unspecified and loopback addresses (§2.5.2, §2.5.3).
 */
function isIPv4Compatible(parts: readonly number[]): boolean {
  for (let i = 0; i < 6; i++) if (parts[i] !== 0) return false;
  return parts[6] !== 0 || (parts[7] ?? 0) > 1;
}

/**
 * Parses one IP literal, strictly, because text from a forwarding header or a PROXY header must
 * be refused (a break in the chain) rather than read as something else:
 * - IPv4 only in the four-part dotted form (no `127.1`, no octal, no leading zeros).
 * - IPv4-mapped IPv6 (`::ffff:a.b.c.d`) becomes IPv4 (docs/api.md, "/v1/ip"); IPv4-compatible
 *   IPv6 (`::8.8.8.8`) is refused (RFC 4291 §2.5.5.1), not reported as the IPv4 address.
 * - A zone index (`%eth0`) only on a link-local IPv6 address, the one kind that needs one
 *   (RFC 4007 §6, §11) and the one kind Node writes with one for a socket's peer (it appends
 *   `%interface` to a link-local `remoteAddress`); it names an interface of ours, not the
 *   caller, and is dropped. On IPv4 (`8.8.8.8%eth0`) or a global address it is refused.
 */
export function parseAddress(input: string): ParsedAddress | undefined {
  if (DOTTED_QUAD.test(input)) {
    return new LazyIPv4(input);
  }
  const percent = input.indexOf('%');
  const bare = percent === -1 ? input : input.slice(0, percent);
  if (!bare.includes(':') || !ipaddr.IPv6.isValid(bare) || COMPATIBLE_DOTTED.test(bare)) return undefined;
  const v6 = ipaddr.IPv6.parse(bare);
  if (isIPv4Compatible(v6.parts)) return undefined;
  // fe80::/10 (RFC 4291 §2.5.6).
  if (percent !== -1 && !(((v6.parts[0] ?? 0) & 0xffc0) === 0xfe80 && ZONE.test(input.slice(percent + 1)))) return undefined;
  if (v6.isIPv4MappedAddress()) {
    const v4 = v6.toIPv4Address();
    return { text: v4.toString(), version: 'ipv4', addr: v4, v4: ipv4Value(v4) };
  }
  v6.zoneId = undefined;
  return { text: v6.toRFC5952String(), version: 'ipv6', addr: v6, v4: undefined };
}

/**
 * The rate-limit source for an address: IPv4 as is, IPv6 by its /64 (docs/api.md, "Rate limits"),
 * since one subscriber usually holds a whole /64.
 */
export function sourceOf(address: ParsedAddress): string {
  if (address.version === 'ipv4') return address.text;
  const parts = (address.addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}

/**
 * The wider prefixes an IPv6 source is also counted by: its /56 and its /48, the sizes an end
 * site is handed (RFC 6177, RIPE-690), each with its own window (docs/api.md, "Rate limits").
 * None for IPv4: one address is one source.
 */
export function aggregatesOf(address: ParsedAddress): readonly [string, string] | undefined {
  if (address.version === 'ipv4') return undefined;
  const [a = 0, b = 0, c = 0, d = 0] = (address.addr as ipaddr.IPv6).parts;
  const top = `${a.toString(16)}:${b.toString(16)}:${c.toString(16)}`;
  return [`${top}:${(d & 0xff00).toString(16)}::/56`, `${top}::/48`];
}
