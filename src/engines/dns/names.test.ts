import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../core/net/address.js';
import { reverseNameOf } from '../../core/net/reverse.js';
import { canonicalName, reverseName } from './names.js';

describe('canonicalName', () => {
  it.each([
    ['Example.COM.', 'example.com'],
    ['_dmarc.example.com', '_dmarc.example.com'],
    ['münchen.de', 'xn--mnchen-3ya.de'],
    ['ÄÖÜ.example', 'xn--4ca0bs.example'],
    ['a-b_c.d', 'a-b_c.d'],
  ])('%s → %s', (input, output) => {
    expect(canonicalName(input)).toBe(output);
  });

  it.each([
    ['', /at least one label/],
    ['.', /at least one label/],
    ['a..b', /empty label/],
    [`${'a'.repeat(64)}.b`, /at most 63/],
    ['a b.c', /letters, digits, hyphen and underscore/],
    ['a*.example', /letters, digits, hyphen and underscore/],
    ['ü/x.example', /not allowed/],
    ['ü@x.example', /not allowed/],
  ])('rejects %j', (input, rule) => {
    expect(() => canonicalName(input)).toThrow(rule);
  });
});

describe('reverseName', () => {
  it('reverses IPv4 octets under in-addr.arpa (RFC 1035 §3.5)', () => {
    expect(reverseName('192.0.2.1')).toBe('1.2.0.192.in-addr.arpa');
  });
  it('reverses IPv6 nibbles under ip6.arpa (RFC 3596 §2.5)', () => {
    expect(reverseName('2001:db8::567:89ab')).toBe('b.a.9.8.7.6.5.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
  });
  it.each(['example.com', '1.2.3', '01.2.3.4', 'fe80::1%eth0', '::ffff:1.2.3.256'])('rejects %j', (input) => {
    expect(() => reverseName(input)).toThrow();
  });
});

describe('reverseNameOf (a parsed caller address)', () => {
  it.each(['192.0.2.1', '255.0.10.1', '0.0.0.0', '::ffff:203.0.113.9', '2001:db8::567:89ab'])('gives what reverseName gives for %s', (text) => {
    const address = parseAddress(text);
    if (address === undefined) throw new Error(`${text} did not parse`);
    // reverseName of the canonical text: a mapped address is named as the IPv4 it is.
    expect(reverseNameOf(address)).toBe(reverseName(address.text));
  });
});
