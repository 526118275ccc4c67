// PROXY protocol v1 and v2 on the listener, from trusted and untrusted peers, over real sockets.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

/** Sends raw bytes from a chosen loopback address and returns everything the server answers. */
function exchange(port: number, bytes: Buffer | string, localAddress = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('close', () => {
      resolve(text);
    });
    socket.on('error', reject);
  });
}

const request = (path = '/v1/ip', headers = '') => `GET ${path} HTTP/1.1\r\nHost: api.test\r\n${headers}Connection: close\r\n\r\n`;
const REQUEST = request();
const body = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { data: { address: string; ip_version: string; connection: Record<string, unknown> }; code?: string; detail?: string };

/** Every forwarding header a client might send to name itself as someone else. */
const SPOOFS = 'X-Forwarded-For: 8.8.8.8\r\nForwarded: for=8.8.4.4\r\nX-Real-IP: 9.9.9.9\r\n';

const SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
const tlv = (type: number, value: Buffer) => Buffer.concat([Buffer.from([type, value.length >> 8, value.length & 0xff]), value]);
/** The SSL TLV with the client-used-SSL flag, verify result 0 and one version sub-TLV (proxy-protocol.txt §2.2.5). */
const sslTlv = (version: string) => tlv(0x20, Buffer.concat([Buffer.from([0x01, 0, 0, 0, 0]), tlv(0x21, Buffer.from(version, 'latin1'))]));
/** A v2 header (proxy-protocol.txt §2.2): `command` 0 LOCAL, 1 PROXY; `family` the 13th byte. */
function v2(command: number, family: number, addresses: number[], tlvs: Buffer[] = []): Buffer {
  const rest = Buffer.concat([Buffer.from(addresses), ...tlvs]);
  return Buffer.concat([Buffer.from([...SIGNATURE, 0x20 | command, family, rest.length >> 8, rest.length & 0xff]), rest]);
}
/** TCP over IPv4 from 203.0.113.7:40000 to 127.0.0.1:80. */
const V4_ADDRESSES = [203, 0, 113, 7, 127, 0, 0, 1, 0x9c, 0x40, 0, 80];

describe('PROXY protocol (NETDIAG_PROXY_PROTOCOL=on)', () => {
  let server: TestServer;
  beforeAll(async () => {
    // Only 127.0.0.1 is the proxy; 127.0.0.2 is an ordinary client.
    server = await startTestServer({ NETDIAG_PROXY_PROTOCOL: 'on', NETDIAG_TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(() => server.close());

  it('v1 from the trusted proxy names the client', async () => {
    const text = await exchange(server.port, `PROXY TCP4 8.8.8.8 127.0.0.1 40000 80\r\n${REQUEST}`);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(body(text).data.address).toBe('8.8.8.8');
    expect(body(text).data.connection).toEqual({ provider_colo: null, http_protocol: null, tls_version: null });
  });

  it('v1 TCP6 with an IPv4-mapped source (HAProxy on a dual-stack bind) names the IPv4 client', async () => {
    const text = await exchange(server.port, `PROXY TCP6 ::ffff:203.0.113.9 ::ffff:127.0.0.1 40000 80\r\n${REQUEST}`);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(body(text).data).toMatchObject({ address: '203.0.113.9', ip_version: 'ipv4' });
  });

  it('v1 whose address is not of the family it names is refused: the connection is closed unanswered', async () => {
    for (const line of ['PROXY TCP4 2001:db8::9 127.0.0.1 40000 80', 'PROXY TCP4 ::ffff:203.0.113.9 127.0.0.1 40000 80', 'PROXY TCP6 203.0.113.9 ::1 40000 80']) {
      expect({ line, answer: await exchange(server.port, `${line}\r\n${REQUEST}`) }).toEqual({ line, answer: '' });
    }
  });

  it('v2 from the trusted proxy carries the protocol and TLS version in TLVs', async () => {
    const addresses = [0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88, ...Array<number>(16).fill(0), 0x9c, 0x40, 0, 80];
    const header = v2(0x1, 0x21, addresses, [tlv(0x01, Buffer.from('h2')), sslTlv('TLSv1.3')]);
    const text = await exchange(server.port, Buffer.concat([header, Buffer.from(REQUEST)]));
    expect(body(text).data.address).toBe('2001:4860:4860::8888');
    expect(body(text).data.connection).toEqual({ provider_colo: null, http_protocol: 'HTTP/2', tls_version: 'TLSv1.3' });
  });

  it('v2 INET6 with an IPv4-mapped source (HAProxy on a dual-stack bind) names the IPv4 client', async () => {
    const mapped = [...Array<number>(10).fill(0), 0xff, 0xff, 203, 0, 113, 10];
    const header = v2(0x1, 0x21, [...mapped, ...Array<number>(15).fill(0), 1, 0x9c, 0x40, 0, 80]);
    const text = await exchange(server.port, Buffer.concat([header, Buffer.from(REQUEST)]));
    expect(body(text).data).toMatchObject({ address: '203.0.113.10', ip_version: 'ipv4' });
  });

  it('the SSL TLV\'s version is reported only when it is a TLS or SSL version name', async () => {
    const tlsOf = async (version: string) => {
      const text = await exchange(server.port, Buffer.concat([v2(0x1, 0x11, V4_ADDRESSES, [sslTlv(version)]), Buffer.from(REQUEST)]));
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      return body(text).data.connection.tls_version;
    };
    // What OpenSSL's SSL_get_version() names, which HAProxy passes.
    for (const version of ['TLSv1.3', 'TLSv1.2', 'TLSv1.1', 'TLSv1', 'SSLv3']) expect(await tlsOf(version)).toBe(version);
    for (const version of [`<script>${'A'.repeat(22)}`, 'TLSv1.2 ', 'tlsv1.3', 'TLSv1.4', 'unknown', '', 'TLSv1.3\u0000']) {
      expect({ version, reported: await tlsOf(version) }).toEqual({ version, reported: null });
    }
  });

  it('the ALPN TLV is reported only when it names an HTTP protocol', async () => {
    const protocolOf = async (alpn: string) => {
      const text = await exchange(server.port, Buffer.concat([v2(0x1, 0x11, V4_ADDRESSES, [tlv(0x01, Buffer.from(alpn, 'latin1'))]), Buffer.from(REQUEST)]));
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      return body(text).data.connection.http_protocol;
    };
    expect(await protocolOf('http/1.1')).toBe('HTTP/1.1');
    // Names of the table object's own inherited properties must not reach the answer.
    for (const alpn of ['__proto__', 'toString', 'constructor', 'h2c', 'HTTP/2', 'spdy/3']) {
      expect({ alpn, reported: await protocolOf(alpn) }).toEqual({ alpn, reported: null });
    }
  });

  describe('a header that names no client: no caller, and no forwarding header read', () => {
    const unavailable = (text: string) => {
      expect(text).toMatch(/^HTTP\/1\.1 503/);
      expect(body(text)).toMatchObject({ code: 'connection_unavailable' });
      for (const spoofed of ['8.8.8.8', '8.8.4.4', '9.9.9.9', '127.0.0.1']) expect(text).not.toContain(spoofed);
    };

    it('v1 UNKNOWN', async () => {
      unavailable(await exchange(server.port, `PROXY UNKNOWN\r\n${request('/v1/ip', SPOOFS)}`));
      // Anything between UNKNOWN and the line's end is ignored (proxy-protocol.txt §2.1).
      unavailable(await exchange(server.port, `PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n${request('/v1/ip', SPOOFS)}`));
    });

    it('v2 LOCAL', async () => {
      unavailable(await exchange(server.port, Buffer.concat([v2(0x0, 0x00, []), Buffer.from(request('/v1/ip', SPOOFS))])));
    });

    it('v2 PROXY with the unspecified family', async () => {
      unavailable(await exchange(server.port, Buffer.concat([v2(0x1, 0x00, []), Buffer.from(request('/v1/ip', SPOOFS))])));
    });

    it('the plain-address answer of GET / is refused the same way, as a line for curl', async () => {
      const text = await exchange(server.port, `PROXY UNKNOWN\r\n${request('/', SPOOFS)}`);
      expect(text).toMatch(/^HTTP\/1\.1 503/);
      expect(text.slice(text.indexOf('\r\n\r\n') + 4)).toMatch(/^Connection unavailable: The caller's address cannot be established: .+\.\n$/);
      for (const spoofed of ['8.8.8.8', '8.8.4.4', '9.9.9.9', '127.0.0.1']) expect(text).not.toContain(spoofed);
      // A client that asks for JSON gets the problem document, as everywhere.
      unavailable(await exchange(server.port, `PROXY UNKNOWN\r\n${request('/', `${SPOOFS}Accept: application/json\r\n`)}`));
    });

    it('a route that needs no caller is served: a proxy\'s health check over LOCAL gets 200', async () => {
      const text = await exchange(server.port, Buffer.concat([v2(0x0, 0x00, []), Buffer.from(request('/v1/health'))]));
      expect(text).toMatch(/^HTTP\/1\.1 200/);
    });
  });

  it('a PROXY-named source that is itself a trusted address is the caller: forwarding headers are never read', async () => {
    const text = await exchange(server.port, `PROXY TCP4 127.0.0.1 127.0.0.1 40000 80\r\n${request('/v1/ip', SPOOFS)}`);
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(body(text).data.address).toBe('127.0.0.1');
    const v6 = await exchange(server.port, `PROXY TCP6 ::ffff:127.0.0.1 ::ffff:127.0.0.1 40000 80\r\n${request('/v1/ip', SPOOFS)}`);
    expect(body(v6).data.address).toBe('127.0.0.1');
  });

  it('an untrusted peer cannot use a PROXY header to claim another address', async () => {
    const text = await exchange(server.port, `PROXY TCP4 8.8.8.8 127.0.0.1 40000 80\r\n${REQUEST}`, '127.0.0.2');
    expect(text).toMatch(/^HTTP\/1\.1 400/);
    expect(text).not.toContain('8.8.8.8');
  });

  it('an untrusted peer speaking plain HTTP is served as itself, and its forwarding headers are not read', async () => {
    const text = await exchange(server.port, request('/v1/ip', SPOOFS), '127.0.0.2');
    expect(body(text).data.address).toBe('127.0.0.2');
    expect(body(text).data.connection.http_protocol).toBe('HTTP/1.1');
  });

  it('the trusted proxy must send a header: without one the connection is closed unanswered', async () => {
    expect(await exchange(server.port, REQUEST)).toBe('');
  });
});
