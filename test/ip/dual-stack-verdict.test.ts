// The dual-stack check's rules (src/common/families.ts): the verdict a person reads for each pair of
// family results, and which IPv6 addresses are a relay's rather than the caller's.
import { describe, expect, it } from 'vitest';
import { isIpv6LiteralOrigin } from '../../src/common/origin.js';
import { describeCheck, preference, settleCheck, tunnelOf, verdict, type FamilyCheck } from '../../src/common/families.js';

const ok = (address: string): FamilyCheck => ({ state: 'ok', ms: 12, address, network: 'AS64500 Example' });
const failed: FamilyCheck = { state: 'failed', ms: 3 };
const timeout: FamilyCheck = { state: 'timeout', ms: 4000 };
const unchecked: FamilyCheck = { state: 'unchecked', reason: 'no-origin' };

describe('the dual-stack verdict', () => {
  it.each<[string, FamilyCheck, FamilyCheck, string]>([
    ['both answer', ok('192.0.2.1'), ok('2001:db8::1'), 'both'],
    ['IPv6 fails at once', ok('192.0.2.1'), failed, 'ipv4-only'],
    ['IPv4 fails at once', failed, ok('2001:db8::1'), 'ipv6-only'],
    ['IPv6 never answers', ok('192.0.2.1'), timeout, 'ipv6-broken'],
    ['IPv4 never answers', timeout, ok('2001:db8::1'), 'ipv4-broken'],
    ['IPv6 has no origin', ok('192.0.2.1'), unchecked, 'partial'],
    ['neither answers', timeout, failed, 'neither'],
    ['IPv6 unasked, but the page came over it', failed, { state: 'unchecked', reason: 'no-origin', viaPage: { address: '2001:db8::9', network: null } }, 'ipv6-only'],
    ['the IPv6 origin answered over IPv4', ok('192.0.2.1'), { state: 'mixed', ms: 5, address: '192.0.2.1' }, 'partial'],
  ])('%s: %s', (_name, v4, v6, kind) => {
    expect(verdict(v4, v6).kind).toBe(kind);
  });

  it('a broken family is named with how long it was waited for; a missing one with how fast it failed', () => {
    expect(verdict(ok('192.0.2.1'), timeout).text).toBe('IPv6 is broken: it did not answer in 4.0 s. IPv4 works, but sites that offer IPv6 may load slowly while browsers and apps wait on it before falling back.');
    expect(verdict(ok('192.0.2.1'), failed).text).toBe('IPv4 only: there is no IPv6 on this connection (it failed at once, in 3 ms, so nothing waits for it).');
  });

  it('says why a family went unasked', () => {
    expect(verdict(ok('192.0.2.1'), unchecked).text).toBe('IPv4 works; IPv6 was not checked: this server has no IPv6-only address.');
    expect(verdict(ok('192.0.2.1'), { state: 'unchecked', reason: 'literal' }).text).toMatch(/names its IPv6 origin by an address, which a page's security policy cannot allow/);
  });

  it('a failure at once of the family the page itself came over is the browser refusing to ask, not a missing family', () => {
    // Opened at a LAN address over IPv4, the IPv4 origin on loopback: Chromium refuses the request
    // (Private Network Access), and it fails at once as a missing family would.
    const page = { family: 'ipv4' as const, address: '10.0.0.5', network: null };
    const v4 = settleCheck('ipv4', failed, page);
    const v6 = settleCheck('ipv6', failed, page);
    expect(v4).toEqual({ state: 'unchecked', reason: 'refused', viaPage: { address: '10.0.0.5', network: null } });
    // The other family's failure stands: the page did not come over it.
    expect(v6).toBe(failed);
    expect(verdict(v4, v6).kind).toBe('ipv4-only');
    expect(describeCheck('ipv4', v4)).toEqual({
      value: '10.0.0.5',
      detail: "network unknown; this page came over it; the browser refused to ask this server's IPv4-only address (browsers keep a page from asking an address more private than its own; run netdiag ip --both)",
    });
    // A family that answered, or timed out, or with no page answer to go by: unchanged.
    expect(settleCheck('ipv4', ok('192.0.2.1'), page)).toEqual(ok('192.0.2.1'));
    expect(settleCheck('ipv4', timeout, page)).toBe(timeout);
    expect(settleCheck('ipv4', failed, undefined)).toBe(failed);
  });
});

describe('IPv6 addresses that are a relay\'s', () => {
  it.each([
    ['2002:c000:204::1', /^6to4/],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /^Teredo/],
    ['2001::1', /^Teredo/],
    ['2001:db8::1', undefined],
    ['2001:4860:4860::8888', undefined],
    ['192.0.2.1', undefined],
    ['::1', undefined],
  ])('%s', (address, expected) => {
    const found = tunnelOf(address);
    if (expected === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(expected);
  });

  it('a tunnelled address says so beside its network', () => {
    expect(describeCheck('ipv6', ok('2002:c000:204::1')).detail).toBe("AS64500 Example; answered in 12 ms; 6to4: IPv6 tunnelled over IPv4; the network shown is the relay's, not yours");
  });
});

describe('what the browser chose', () => {
  it('names the family, and says when an address left the browser no choice', () => {
    expect(preference('ipv6', 'netdiag.example.net')).toEqual({ value: 'IPv6', detail: "this page's own connection came over it" });
    expect(preference('ipv4', '127.0.0.1').detail).toBe('this page was opened by an IPv4 address, so the browser had no choice');
    expect(preference('ipv6', '[::1]').detail).toBe('this page was opened by an IPv6 address, so the browser had no choice');
  });

  it('knows an IPv6-literal origin, which no Content-Security-Policy can name', () => {
    expect(isIpv6LiteralOrigin('http://[::1]:8080')).toBe(true);
    expect(isIpv6LiteralOrigin('https://ipv6.example.net')).toBe(false);
    expect(isIpv6LiteralOrigin('http://127.0.0.1:8080')).toBe(false);
  });
});
