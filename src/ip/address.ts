import ipaddr from 'ipaddr.js';

export type IpVersion = 'ipv4' | 'ipv6';

export interface ParsedAddress {
  /** Canonical text: dotted quad for IPv4, RFC 5952 compressed lower-case for IPv6. */
  text: string;
  version: IpVersion;
  addr: ipaddr.IPv4 | ipaddr.IPv6;
}

/**
 * Parses one IP literal. IPv4-mapped IPv6 (`::ffff:a.b.c.d`) becomes IPv4 (SPEC-NOTES, /v1/ip);
 * a zone index (`%eth0`) is dropped because it names an interface of ours, not the caller.
 * Only the four-part dotted form of IPv4 is accepted (no `127.1`, no octal), so what we report
 * is what the peer actually is.
 */
/** Most requests need only the text of an IPv4 peer (the rate-limit source): parse on demand. */
class LazyIPv4 implements ParsedAddress {
  readonly version = 'ipv4';
  #addr: ipaddr.IPv4 | undefined;
  constructor(readonly text: string) {}
  get addr(): ipaddr.IPv4 {
    return (this.#addr ??= new ipaddr.IPv4(this.text.split('.').map(Number)));
  }
}

/** Dotted-quad IPv4 without leading zeros: parsed by hand, the hottest case of all. */
const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;

export function parseAddress(input: string): ParsedAddress | undefined {
  if (DOTTED_QUAD.test(input)) {
    return new LazyIPv4(input);
  }
  const percent = input.indexOf('%');
  const bare = percent === -1 ? input : input.slice(0, percent);
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) addr = ipaddr.IPv4.parse(bare);
  else if (bare.includes(':') && ipaddr.IPv6.isValid(bare)) addr = ipaddr.IPv6.parse(bare);
  else return undefined;
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) {
    addr = (addr as ipaddr.IPv6).toIPv4Address();
  }
  if (addr.kind() === 'ipv4') return { text: addr.toString(), version: 'ipv4', addr };
  const v6 = addr as ipaddr.IPv6;
  v6.zoneId = undefined;
  return { text: v6.toRFC5952String(), version: 'ipv6', addr: v6 };
}

/**
 * The rate-limit source for an address: IPv4 as is, IPv6 by its /64 (SPEC-NOTES, Rate limits),
 * since one subscriber usually holds a whole /64.
 */
export function sourceOf(address: ParsedAddress): string {
  if (address.version === 'ipv4') return address.text;
  const parts = (address.addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${parts.map((p) => p.toString(16)).join(':')}::/64`;
}
