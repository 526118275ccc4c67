import { describe, expect, it } from 'vitest';
import { parseAddress } from './address.js';

describe('parseAddress: the forms an address may take in a header, and the ones refused', () => {
  it.each([
    ['8.8.8.8', '8.8.8.8', 'ipv4'],
    ['::ffff:8.8.8.8', '8.8.8.8', 'ipv4'],
    ['::FFFF:808:808', '8.8.8.8', 'ipv4'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1', 'ipv6'],
    ['64:ff9b::8.8.8.8', '64:ff9b::808:808', 'ipv6'],
    ['::1', '::1', 'ipv6'],
    ['::', '::', 'ipv6'],
    // Node writes a link-local peer with its interface (`remoteAddress`): the zone is ours, dropped.
    ['fe80::1%eth0', 'fe80::1', 'ipv6'],
    ['FE80::5EED:2%ndlh0a1b2c', 'fe80::5eed:2', 'ipv6'],
    ['febf::1%3', 'febf::1', 'ipv6'],
  ])('%s is %s (%s)', (text, canonical, version) => {
    expect(parseAddress(text)).toMatchObject({ text: canonical, version });
  });

  it.each([
    // IPv4-compatible IPv6 (RFC 4291 §2.5.5.1, deprecated); ipaddr.js reads the first as mapped.
    '::8.8.8.8',
    '::808:808',
    '0:0:0:0:0:0:8.8.8.8',
    '::2',
    // A zone index where none belongs: IPv4, global and mapped IPv6, or an empty one.
    '8.8.8.8%eth0',
    '2001:db8::1%eth0',
    '::ffff:8.8.8.8%eth0',
    'fec0::1%eth0',
    'fe80::1%',
    'fe80::1%eth 0',
    // Not four-part dotted IPv4.
    '127.1',
    '0x7f.0.0.1',
    '010.0.0.1',
    '1.2.3',
    '1.2.3.256',
    'example.com',
    'unknown',
    '',
  ])('refuses %j', (text) => {
    expect(parseAddress(text)).toBeUndefined();
  });
});
