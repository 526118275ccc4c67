// Fuzz target: one IP literal as a forwarding header, a PROXY v1 line or the `?ip=` parameter
// gives it (parseAddress, src/core/net/address.ts). Its contract: a total function, strict (what
// it does not take is undefined), whose answer is canonical text (a dotted quad, or RFC 5952
// IPv6) with the version, the ipaddr.js object and, for IPv4, the 32-bit number all naming the
// same address the input did; the rate-limit source and aggregates derive from it.
import ipaddr from 'ipaddr.js';
import { aggregatesOf, ipv4Octets, parseAddress, sourceOf, type ParsedAddress } from '../../src/core/net/address.js';
import { check, total } from '../invariant.js';

/** Whether `cidr` (`a:b:c:d::/64` and the like) parses and holds `address`. */
function holds(cidr: string, address: ParsedAddress): boolean {
  try {
    const [network, bits] = ipaddr.parseCIDR(cidr);
    return network.kind() === address.addr.kind() && address.addr.match(network, bits);
  } catch {
    return false;
  }
}

export function fuzz(data: Buffer): void {
  // Text from a header arrives as latin1, from a decoded query parameter as any Unicode: UTF-8
  // covers both ranges of characters.
  const input = data.toString('utf8');
  const parsed = total('address/never-throws', () => parseAddress(input));
  if (parsed === undefined) return;
  const { text, version, addr, v4 } = parsed;
  const where = () => `${JSON.stringify(input)} gave ${JSON.stringify({ text, version, v4 })}`;

  // Canonical: parsing the answer gives the answer back.
  const again = parseAddress(text);
  check(again?.text === text && again.version === version, 'address/canonical', where);
  check(addr.kind() === version, 'address/consistent', where);
  if (version === 'ipv4') {
    check(v4 !== undefined && Number.isInteger(v4) && v4 >= 0 && v4 <= 0xffffffff, 'address/consistent', where);
    check(ipv4Octets(v4).join('.') === text && addr.toString() === text, 'address/consistent', where);
  } else {
    check(v4 === undefined && (addr as ipaddr.IPv6).toRFC5952String() === text && !text.includes('%'), 'address/consistent', where);
  }

  // The same address the input named, by ipaddr.js's own reading (its zone dropped; IPv4-mapped
  // IPv6 read as the IPv4 address it maps, docs/api.md "/v1/ip").
  const bare = input.split('%')[0] ?? '';
  const named = ipaddr.process(bare);
  check(named.kind() === addr.kind() && named.toNormalizedString() === addr.toNormalizedString(), 'address/same-address', where);

  // The rate-limit source is the address (IPv4) or its /64, and the aggregates its /56 and /48.
  const source = sourceOf(parsed);
  check(version === 'ipv4' ? source === text : source.endsWith('::/64') && holds(source, parsed), 'address/rate-limit-source', () => `${where()}: ${source}`);
  const aggregates = aggregatesOf(parsed);
  check(
    version === 'ipv4' ? aggregates === undefined : aggregates !== undefined && aggregates[0].endsWith('::/56') && aggregates[1].endsWith('::/48') && aggregates.every((cidr) => holds(cidr, parsed)),
    'address/rate-limit-source',
    () => `${where()}: ${String(aggregates)}`,
  );
}
