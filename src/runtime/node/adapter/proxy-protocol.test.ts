import { describe, expect, it } from 'vitest';
import { parseProxyHeader } from './proxy-protocol.js';

const SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];

/** A v2 header built from the layout in haproxy's proxy-protocol.txt §2.2, written out by hand. */
function v2(command: number, family: number, addresses: number[], tlvs: number[] = []): Buffer {
  const body = [...addresses, ...tlvs];
  return Buffer.from([...SIGNATURE, 0x20 | command, family, body.length >> 8, body.length & 0xff, ...body]);
}

const tlv = (type: number, value: number[]) => [type, value.length >> 8, value.length & 0xff, ...value];
const ascii = (text: string) => [...Buffer.from(text, 'latin1')];

describe('parseProxyHeader', () => {
  it('reads v1 TCP4 and TCP6', () => {
    expect(parseProxyHeader(Buffer.from('PROXY TCP4 203.0.113.9 192.0.2.1 5555 443\r\nGET'))).toEqual({
      status: 'ok',
      length: 43,
      facts: { sourceAddress: '203.0.113.9', httpProtocol: null, tlsVersion: null },
    });
    const v6 = parseProxyHeader(Buffer.from('PROXY TCP6 2001:db8::9 2001:db8::1 5555 443\r\n'));
    expect(v6).toMatchObject({ status: 'ok', facts: { sourceAddress: '2001:db8::9' } });
  });

  it('reads v1 TCP6 with an IPv4-mapped source as the IPv4 address, as HAProxy writes it on a dual-stack bind', () => {
    expect(parseProxyHeader(Buffer.from('PROXY TCP6 ::ffff:127.0.0.61 ::ffff:127.0.0.1 49626 18991\r\n'))).toMatchObject({
      status: 'ok',
      facts: { sourceAddress: '127.0.0.61' },
    });
  });

  it('refuses a v1 address of another family than the line names, or with a zone index', () => {
    for (const line of ['PROXY TCP4 2001:db8::9 192.0.2.1 1 2', 'PROXY TCP4 ::ffff:203.0.113.9 192.0.2.1 1 2', 'PROXY TCP6 203.0.113.9 2001:db8::1 1 2', 'PROXY TCP6 fe80::1%eth0 fe80::2 1 2']) {
      expect({ line, parsed: parseProxyHeader(Buffer.from(`${line}\r\n`)) }).toEqual({ line, parsed: { status: 'invalid', reason: 'bad v1 source address' } });
    }
  });

  it('reads v1 UNKNOWN as "no client address"', () => {
    expect(parseProxyHeader(Buffer.from('PROXY UNKNOWN\r\n'))).toEqual({ status: 'ok', length: 15, facts: undefined });
  });

  it('waits for more bytes, and refuses what is not a header', () => {
    expect(parseProxyHeader(Buffer.from('PROX'))).toEqual({ status: 'incomplete' });
    expect(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3.4'))).toEqual({ status: 'incomplete' });
    expect(parseProxyHeader(Buffer.from(SIGNATURE.slice(0, 5)))).toEqual({ status: 'incomplete' });
    expect(parseProxyHeader(Buffer.from('GET / HTTP/1.1\r\n')).status).toBe('invalid');
    expect(parseProxyHeader(Buffer.from('PROXY TCP4 1.2.3 4.5.6.7 1 2\r\n')).status).toBe('invalid');
    expect(parseProxyHeader(Buffer.from(`PROXY TCP4 ${'1'.repeat(120)}`)).status).toBe('invalid');
  });

  it('reads v2 TCP4 with ALPN and SSL version TLVs', () => {
    const header = v2(0x1, 0x11, [203, 0, 113, 7, 192, 0, 2, 1, 0x15, 0xb3, 0x01, 0xbb], [
      ...tlv(0x01, ascii('h2')),
      ...tlv(0x20, [0x01, 0, 0, 0, 0, ...tlv(0x21, ascii('TLSv1.3'))]),
    ]);
    expect(parseProxyHeader(Buffer.concat([header, Buffer.from('GET /')]))).toEqual({
      status: 'ok',
      length: header.length,
      facts: { sourceAddress: '203.0.113.7', httpProtocol: 'HTTP/2', tlsVersion: 'TLSv1.3' },
    });
  });

  it('keeps the SSL version only when it is a TLS or SSL version name, and ALPN only when it names an HTTP protocol', () => {
    const facts = (alpn: string, version: string) => {
      const parsed = parseProxyHeader(v2(0x1, 0x11, [203, 0, 113, 7, 192, 0, 2, 1, 0x15, 0xb3, 0x01, 0xbb], [...tlv(0x01, ascii(alpn)), ...tlv(0x20, [0x01, 0, 0, 0, 0, ...tlv(0x21, ascii(version))])]));
      return parsed.status === 'ok' ? { httpProtocol: parsed.facts?.httpProtocol, tlsVersion: parsed.facts?.tlsVersion } : parsed;
    };
    expect(facts('http/1.1', 'SSLv3')).toEqual({ httpProtocol: 'HTTP/1.1', tlsVersion: 'SSLv3' });
    expect(facts('h3', 'TLSv1')).toEqual({ httpProtocol: 'HTTP/3', tlsVersion: 'TLSv1' });
    expect(facts('__proto__', `<script>${'A'.repeat(22)}`)).toEqual({ httpProtocol: null, tlsVersion: null });
    expect(facts('constructor', 'TLSv1.3 ')).toEqual({ httpProtocol: null, tlsVersion: null });
  });

  it('reads v2 TCP6 with an IPv4-mapped source as the IPv4 address', () => {
    const header = v2(0x1, 0x21, [...Array<number>(10).fill(0), 0xff, 0xff, 127, 0, 0, 62, ...Array<number>(10).fill(0), 0xff, 0xff, 127, 0, 0, 1, 0x01, 0x4a, 0x30, 0x39]);
    expect(parseProxyHeader(header)).toMatchObject({ status: 'ok', facts: { sourceAddress: '127.0.0.62' } });
  });

  it('reads v2 TCP6 and LOCAL', () => {
    const source = [0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), 0x09];
    const header = v2(0x1, 0x21, [...source, ...Array<number>(16).fill(0), 0, 1, 0, 2]);
    expect(parseProxyHeader(header)).toMatchObject({ status: 'ok', facts: { sourceAddress: '2001:db8::9', httpProtocol: null, tlsVersion: null } });
    expect(parseProxyHeader(v2(0x0, 0x00, []))).toEqual({ status: 'ok', length: 16, facts: undefined });
  });
});

// Found by fuzzing (fuzz/targets/proxy-protocol.ts): a v1 line longer than the
// specification's 107 bytes was taken when its CRLF arrived in the same read, and refused when the
// same line came in pieces.
describe('a PROXY v1 line past 107 bytes', () => {
  const long = `PROXY TCP4 192.0.2.1 192.0.2.2 1234 80${' '.repeat(80)}\r\n`;
  it('is refused whole and in pieces alike', () => {
    expect(long.length).toBeGreaterThan(107);
    expect(parseProxyHeader(Buffer.from(`${long}GET / HTTP/1.1\r\n`))).toEqual({ status: 'invalid', reason: 'v1 header too long' });
    expect(parseProxyHeader(Buffer.from(long.slice(0, 107)))).toEqual({ status: 'invalid', reason: 'v1 header too long' });
  });
  it('within 107 bytes with its CRLF, the longest TCP6 form included, is read', () => {
    const line = 'PROXY TCP4 192.0.2.1 192.0.2.2 1234 80';
    const exact = `PROXY TCP6 2001:db8:1:2:3:4:5:6 2001:db8:1:2:3:4:5:7 65535 65535\r\n`;
    expect(parseProxyHeader(Buffer.from(`${line}\r\n`))).toMatchObject({ status: 'ok' });
    expect(exact.length).toBeLessThanOrEqual(107);
    expect(parseProxyHeader(Buffer.from(exact))).toMatchObject({ status: 'ok', length: exact.length });
  });
});
