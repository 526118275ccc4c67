import { describe, expect, it } from 'vitest';
import { aggregatesOf, parseAddress, sourceOf } from './address.js';
import { resolveCaller } from './caller-address.js';
import { forwardedChain, xForwardedForChain } from './forwarded.js';
import { TRUST_NONE, parseTrustList } from './trust.js';

const address = (r: ReturnType<typeof resolveCaller>) => (r.ok ? r.address.text : `error: ${r.reason}`);

describe('parseAddress', () => {
  it('reports IPv4-mapped IPv6 as IPv4', () => {
    expect(parseAddress('::ffff:192.0.2.7')).toMatchObject({ text: '192.0.2.7', version: 'ipv4' });
  });
  it('canonicalises IPv6 per RFC 5952 and drops a link-local zone index (more in address.test.ts)', () => {
    expect(parseAddress('FE80:0:0:0:0:0:0:1%eth0')).toMatchObject({ text: 'fe80::1', version: 'ipv6' });
  });
  it.each(['127.1', '0x7f.0.0.1', '1.2.3', 'example.com', '', '1.2.3.256', 'unknown'])('refuses %j', (text) => {
    expect(parseAddress(text)).toBeUndefined();
  });
});

describe('sourceOf', () => {
  it('keeps IPv4 whole and buckets IPv6 by /64', () => {
    const v4 = parseAddress('198.51.100.9');
    const a = parseAddress('2001:db8:1:2:aaaa::1');
    const b = parseAddress('2001:db8:1:2:ffff::9');
    const c = parseAddress('2001:db8:1:3::1');
    if (!v4 || !a || !b || !c) throw new Error('parse');
    expect(sourceOf(v4)).toBe('198.51.100.9');
    expect(sourceOf(a)).toBe(sourceOf(b));
    expect(sourceOf(a)).not.toBe(sourceOf(c));
  });

  it('names an IPv6 source\'s /56 and /48 (IPv4 has none), the /56 cutting the fourth group at its high byte', () => {
    const at = (text: string) => {
      const parsed = parseAddress(text);
      if (parsed === undefined) throw new Error('parse');
      return aggregatesOf(parsed);
    };
    expect(at('198.51.100.9')).toBeUndefined();
    expect(at('::ffff:198.51.100.9')).toBeUndefined();
    expect(at('2001:db8:1:2ab::1')).toEqual(['2001:db8:1:200::/56', '2001:db8:1::/48']);
    expect(at('2001:db8:1:2ff:ffff::9')).toEqual(at('2001:db8:1:200::1'));
    expect(at('2001:db8:1:300::1')?.[0]).not.toBe(at('2001:db8:1:2ff::1')?.[0]);
    expect(at('2001:db8:1:300::1')?.[1]).toBe(at('2001:db8:1:2ff::1')?.[1]);
  });
});

describe('forwarding headers', () => {
  it('reads RFC 7239 for= nodes with quotes, brackets and ports', () => {
    expect(forwardedChain('for=192.0.2.43, for="[2001:db8:cafe::17]:4711";proto=https, For="198.51.100.1:8080";by=x')).toEqual([
      '192.0.2.43',
      '2001:db8:cafe::17',
      '198.51.100.1',
    ]);
  });
  it('marks elements without a usable for= as breaks in the chain', () => {
    expect(forwardedChain('for=unknown, proto=http, for=_hidden')).toEqual(['unknown', undefined, '_hidden']);
  });
  it('reads X-Forwarded-For with optional ports', () => {
    expect(xForwardedForChain('203.0.113.5, 198.51.100.2:443, 2001:db8::1, [2001:db8::2]:80')).toEqual([
      '203.0.113.5',
      '198.51.100.2',
      '2001:db8::1',
      '2001:db8::2',
    ]);
  });
});

describe('resolveCaller', () => {
  const trust = parseTrustList('loopback, 10.0.0.0/8');
  /** The request's headers, by lower-case name. */
  const headers = (h: Record<string, string>) => ({ header: (name: string) => h[name] });
  const xff = (peer: string, value: string | undefined, policy = trust) =>
    resolveCaller(peer, headers(value === undefined ? {} : { 'x-forwarded-for': value }), policy, 'x-forwarded-for');

  it('is the peer when nobody is trusted, whatever the headers claim', () => {
    const r = resolveCaller('127.0.0.1', headers({ forwarded: 'for=203.0.113.9', 'x-forwarded-for': '198.51.100.1', 'x-real-ip': '198.51.100.2' }), TRUST_NONE, 'x-forwarded-for');
    expect(address(r)).toBe('127.0.0.1');
  });
  it('is the peer when the peer is not a trusted proxy', () => {
    expect(address(xff('203.0.113.1', '198.51.100.1'))).toBe('203.0.113.1');
  });
  it('is the nearest untrusted hop, read right to left, from a trusted proxy', () => {
    // The client forged the first entry; the trusted proxies appended the rest.
    expect(address(xff('127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.1.1'))).toBe('198.51.100.7');
  });
  it('parses only the last 1024 characters of a long header: the nearest untrusted hop is still found there', () => {
    // 15 KB a client put in front of its own address, which the proxy appended last.
    expect(address(xff('127.0.0.1', `${Array(1000).fill('6.6.6.6').join(', ')}, 198.51.100.7, 10.1.1.1`))).toBe('198.51.100.7');
    const garbage = xff('127.0.0.1', `${'x'.repeat(15_000)}, 198.51.100.7`);
    expect(address(garbage)).toBe('198.51.100.7');
  });
  it('does not walk past the cap: a chain of trusted hops longer than it names no caller, where the whole header would name its first', () => {
    const r = xff('127.0.0.1', `198.51.100.7, ${Array(200).fill('10.0.0.1').join(', ')}`);
    expect(r).toMatchObject({ ok: false, reason: 'the x-forwarded-for header holds more trusted hops than its last 1024 characters' });
    expect(address(xff('127.0.0.1', `198.51.100.7, ${Array(20).fill('10.0.0.1').join(', ')}`))).toBe('198.51.100.7');
  });
  it('reads only the configured header: a client-sent Forwarded passed through by an X-Forwarded-For proxy is ignored', () => {
    const r = resolveCaller('10.0.0.5', headers({ forwarded: 'for=203.0.113.99', 'x-forwarded-for': '198.51.100.7' }), trust, 'x-forwarded-for');
    expect(address(r)).toBe('198.51.100.7');
  });
  it('reads only Forwarded when that is the configured header, ignoring a client-sent X-Forwarded-For', () => {
    const r = resolveCaller('127.0.0.1', headers({ forwarded: 'for="[2001:db8::5]"', 'x-forwarded-for': '198.51.100.7' }), trust, 'forwarded');
    expect(address(r)).toBe('2001:db8::5');
  });
  it('with X-Real-IP, takes its single address and nothing else', () => {
    const r = resolveCaller('127.0.0.1', headers({ 'x-real-ip': '198.51.100.9', 'x-forwarded-for': '203.0.113.1' }), trust, 'x-real-ip');
    expect(address(r)).toBe('198.51.100.9');
    expect(resolveCaller('127.0.0.1', headers({ 'x-real-ip': '198.51.100.9, 203.0.113.1' }), trust, 'x-real-ip').ok).toBe(false);
  });
  it('cannot establish the caller when only a header other than the configured one arrives', () => {
    const r = resolveCaller('127.0.0.1', headers({ forwarded: 'for=198.51.100.1' }), trust, 'x-forwarded-for');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toContain('x-forwarded-for');
  });
  it('reports a mapped forwarded address as IPv4', () => {
    expect(address(xff('::1', '::ffff:198.51.100.8'))).toBe('198.51.100.8');
  });
  it('cannot establish the caller when a trusted proxy sends no header', () => {
    expect(xff('127.0.0.1', undefined).ok).toBe(false);
  });
  it('cannot establish the caller past an entry that is not an address', () => {
    expect(resolveCaller('127.0.0.1', headers({ forwarded: 'for=198.51.100.1, for=unknown' }), trust, 'forwarded').ok).toBe(false);
  });
  it('takes the first hop when every hop is trusted', () => {
    expect(address(xff('127.0.0.1', '10.0.0.5, 10.0.0.6'))).toBe('10.0.0.5');
  });
});

describe('parseTrustList', () => {
  it('accepts CIDRs, bare addresses and loopback', () => {
    const t = parseTrustList('192.0.2.0/24, 2001:db8::/32, 198.51.100.1, loopback');
    for (const ok of ['192.0.2.200', '2001:db8:ffff::1', '198.51.100.1', '127.0.0.9', '::1']) {
      const a = parseAddress(ok);
      expect(a && t.trusts(a), ok).toBe(true);
    }
    const outside = parseAddress('198.51.100.2');
    expect(outside && t.trusts(outside)).toBe(false);
  });
  it.each(['10.0.0.0/33', 'example.com', '10.0.0.0/8,,', 'private'])('rejects %j', (value) => {
    expect(() => parseTrustList(value)).toThrow();
  });
});
