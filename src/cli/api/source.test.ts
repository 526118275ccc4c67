// The source checks against this host's own sockets: the whole of 127/8 is local (the loopback
// route), an address from a documentation range (RFC 5737) is not.
import { describe, expect, it } from 'vitest';
import { bindingOf, checkSource, socketOptions, UsageError } from './source.js';

describe('checkSource', () => {
  it('takes an address this host can send from, with its family, 127.0.0.2 and ::1 included', async () => {
    await expect(checkSource('127.0.0.2')).resolves.toEqual({ localAddress: '127.0.0.2', family: 4 });
    await expect(checkSource('::1')).resolves.toEqual({ localAddress: '::1', family: 6 });
  });

  it('refuses an address not on this host, naming those it has', async () => {
    const refused = checkSource('198.51.100.77');
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow(/^--source 198\.51\.100\.77 is not an address of this host \(its addresses: .*127\.0\.0\.1/);
  });

  it('refuses what is not an address', async () => {
    await expect(checkSource('eth0')).rejects.toThrow('--source takes an IP address of this host, not "eth0"');
  });
});

describe('bindingOf', () => {
  it('a source fixes the family; -4 / -6 alone only the family; nothing, nothing', async () => {
    await expect(bindingOf({ source: '127.0.0.3' })).resolves.toEqual({ localAddress: '127.0.0.3', family: 4 });
    await expect(bindingOf({ family: 'ipv6' })).resolves.toEqual({ family: 6 });
    await expect(bindingOf({})).resolves.toEqual({});
  });

  it('a family that is not the source\'s is bad usage', async () => {
    await expect(bindingOf({ source: '127.0.0.3', family: 'ipv6' })).rejects.toThrow('--source 127.0.0.3 is an IPv4 address: it cannot connect over IPv6');
  });

  it('gives node:net only what is bound', () => {
    expect(socketOptions({})).toEqual({});
    expect(socketOptions({ localAddress: '::1', family: 6 })).toEqual({ localAddress: '::1', family: 6 });
  });
});
