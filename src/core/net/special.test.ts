import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { ipv4RangeMatcher, parseAddress } from './address.js';
import { reverseBlockOf, reverseNameOfText } from './reverse.js';
import { isSpecialUse, specialUseKindOfBlock } from './special.js';
import { parseTrustList } from './trust.js';

function parsed(text: string) {
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`${text} did not parse`);
  return address;
}

function v4(text: string): number {
  const value = parsed(text).v4;
  if (value === undefined) throw new Error(`${text} is not IPv4`);
  return value;
}

/** A 32-bit number as text, through ipaddr.js rather than the code under test. */
function dottedQuad(value: number): string {
  return ipaddr.fromByteArray([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]).toString();
}

/** Every edge of every range ipaddr.js knows, its neighbours, and a spread of other addresses. */
function sampleIpv4(): string[] {
  const out = new Set<string>(['0.0.0.0', '255.255.255.255', '8.8.8.8', '1.1.1.1']);
  const table = (ipaddr.IPv4.prototype as unknown as { SpecialRanges: Record<string, [ipaddr.IPv4, number] | [ipaddr.IPv4, number][]> }).SpecialRanges;
  for (const entry of Object.values(table)) {
    for (const [network, bits] of Array.isArray(entry[0]) ? (entry as [ipaddr.IPv4, number][]) : [entry as [ipaddr.IPv4, number]]) {
      const first = ipaddr.IPv4.networkAddressFromCIDR(`${network.toString()}/${bits}`).toNormalizedString();
      const last = ipaddr.IPv4.broadcastAddressFromCIDR(`${network.toString()}/${bits}`).toNormalizedString();
      for (const edge of [first, last]) {
        const n = ipaddr.IPv4.parse(edge).toByteArray().reduce((a, b) => a * 256 + b, 0);
        for (const v of [n - 1, n, n + 1]) if (v >= 0 && v <= 0xffffffff) out.add(dottedQuad(v));
      }
    }
  }
  for (let v = 0; v < 2 ** 32; v += 16_777_259) out.add(dottedQuad(v));
  return [...out];
}

describe('isSpecialUse', () => {
  const samples = sampleIpv4();

  it('agrees with ipaddr.js range() on every range edge and a spread of IPv4 addresses', () => {
    expect(samples.length).toBeGreaterThan(100);
    const disagreements = samples.filter((text) => {
      const parsed = parseAddress(text);
      return parsed === undefined || isSpecialUse(parsed) !== (ipaddr.IPv4.parse(text).range() !== 'unicast');
    });
    expect(disagreements).toEqual([]);
  });

  it('classifies IPv4-mapped IPv6 as its IPv4 address, and IPv6 by range()', () => {
    expect(isSpecialUse(parsed('::ffff:10.1.2.3'))).toBe(true);
    expect(isSpecialUse(parsed('::ffff:8.8.8.8'))).toBe(false);
    expect(isSpecialUse(parsed('2001:db8::1'))).toBe(true);
    expect(isSpecialUse(parsed('2001:4860:4860::8888'))).toBe(false);
  });
});

describe('IPv4 ranges as numbers', () => {
  it('match as ipaddr.js match() does, /0 and /32 included', () => {
    const cases: [string, string][] = [
      ['10.0.0.0/8', '10.255.255.255'], ['10.0.0.0/8', '11.0.0.0'], ['0.0.0.0/0', '203.0.113.9'],
      ['192.0.2.7/32', '192.0.2.7'], ['192.0.2.7/32', '192.0.2.8'], ['100.64.0.0/10', '100.127.255.255'], ['100.64.0.0/10', '100.128.0.0'],
    ];
    for (const [cidr, text] of cases) {
      const [network, bits] = ipaddr.IPv4.parseCIDR(cidr);
      expect(ipv4RangeMatcher([[network, bits]])(v4(text)), `${text} in ${cidr}`).toBe(ipaddr.IPv4.parse(text).match([network, bits]));
    }
  });

  it('trust lists match mapped and plain IPv4 alike', () => {
    const trust = parseTrustList('loopback,192.0.2.0/24,0.0.0.0/0');
    expect(trust.trusts(parsed('::ffff:192.0.2.200'))).toBe(true);
    const narrow = parseTrustList('192.0.2.0/25');
    expect(narrow.trusts(parsed('192.0.2.127'))).toBe(true);
    expect(narrow.trusts(parsed('192.0.2.128'))).toBe(false);
    expect(narrow.trusts(parsed('::ffff:192.0.2.1'))).toBe(true);
    expect(narrow.trusts(parsed('::1'))).toBe(false);
  });
});

describe('reverse zones of special-use blocks', () => {
  const kindOf = (name: string) => {
    const block = reverseBlockOf(name);
    return block === undefined ? 'not a reverse name' : (specialUseKindOfBlock(block) ?? null);
  };

  it('reads the block a reverse name lies in, whatever stands left of its octets or nibbles', () => {
    expect(reverseBlockOf('5.0.0.10.in-addr.arpa')).toEqual({ bytes: [10, 0, 0, 5], bits: 32 });
    expect(reverseBlockOf('x.0.0.10.in-addr.arpa')).toEqual({ bytes: [10, 0, 0, 0], bits: 24 });
    expect(reverseBlockOf('05.0.0.10.in-addr.arpa')).toEqual({ bytes: [10, 0, 0, 0], bits: 24 });
    expect(reverseBlockOf('1.5.0.0.10.in-addr.arpa')).toEqual({ bytes: [10, 0, 0, 5], bits: 32 });
    expect(reverseBlockOf('in-addr.arpa')).toEqual({ bytes: [0, 0, 0, 0], bits: 0 });
    expect(reverseBlockOf('d.f.ip6.arpa')).toEqual({ bytes: [0xfd, ...new Array<number>(15).fill(0)], bits: 8 });
    expect(reverseBlockOf('example.test')).toBeUndefined();
    expect(reverseBlockOf('in-addr.arpa.example')).toBeUndefined();
  });

  it('a whole address, as the PTR of each spelling the route accepts makes it', () => {
    for (const text of ['10.0.0.5', '::ffff:10.0.0.5', '127.0.0.1', '169.254.1.1', '100.64.0.1', '192.0.2.1', 'fd00::1', 'fe80::1', '::1', '2001:db8::1']) {
      const name = reverseNameOfText(text) ?? '';
      expect(kindOf(name), text).not.toBeNull();
      // The same verdict as the one table of special-use addresses gives the address itself.
      const address = parseAddress(text);
      expect(address !== undefined && isSpecialUse(address), text).toBe(true);
    }
    // An IPv4-mapped address is judged as its IPv4 address, as everywhere else.
    for (const text of ['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.8.8']) expect(kindOf(reverseNameOfText(text) ?? ''), text).toBeNull();
    expect(kindOf(reverseNameOfText('::ffff:10.0.0.5') ?? '')).toBe('private-use (RFC 1918)');
  });

  it('a zone is special-use when its whole block is, and says which kind', () => {
    expect(kindOf('10.in-addr.arpa')).toBe('private-use (RFC 1918)');
    expect(kindOf('168.192.in-addr.arpa')).toBe('private-use (RFC 1918)');
    expect(kindOf('127.in-addr.arpa')).toBe('loopback');
    expect(kindOf('d.f.ip6.arpa')).toBe('unique local (RFC 4193)');
    expect(kindOf('8.b.d.0.1.0.0.2.ip6.arpa')).not.toBeNull();
    // 192.0.0.0/8 holds 192.168.0.0/16 but is not wholly special; 172.16.0.0/12 is not octet-aligned.
    expect(kindOf('192.in-addr.arpa')).toBeNull();
    expect(kindOf('172.in-addr.arpa')).toBeNull();
    expect(kindOf('16.172.in-addr.arpa')).toBe('private-use (RFC 1918)');
    expect(kindOf('in-addr.arpa')).toBeNull();
    expect(kindOf('ip6.arpa')).toBeNull();
    expect(kindOf('8.8.8.in-addr.arpa')).toBeNull();
  });
});
