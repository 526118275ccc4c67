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

  it('reads v2 TCP6 and LOCAL', () => {
    const source = [0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), 0x09];
    const header = v2(0x1, 0x21, [...source, ...Array<number>(16).fill(0), 0, 1, 0, 2]);
    expect(parseProxyHeader(header)).toMatchObject({ status: 'ok', facts: { sourceAddress: '2001:db8::9', httpProtocol: null, tlsVersion: null } });
    expect(parseProxyHeader(v2(0x0, 0x00, []))).toEqual({ status: 'ok', length: 16, facts: undefined });
  });
});
