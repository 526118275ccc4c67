// PROXY protocol v1 and v2 on the listener, from trusted and untrusted peers, over real sockets.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server.js';

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

const REQUEST = 'GET /v1/ip HTTP/1.1\r\nHost: api.test\r\nConnection: close\r\n\r\n';
const body = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { data: { address: string; connection: Record<string, unknown> } };

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

  it('v2 from the trusted proxy carries the protocol and TLS version in TLVs', async () => {
    const alpn = Buffer.from('h2');
    const version = Buffer.from('TLSv1.3');
    const ssl = Buffer.concat([Buffer.from([0x01, 0, 0, 0, 0, 0x21, 0, version.length]), version]);
    const tlvs = Buffer.concat([Buffer.from([0x01, 0, alpn.length]), alpn, Buffer.from([0x20, 0, ssl.length]), ssl]);
    const addresses = Buffer.from([0x20, 0x01, 0x48, 0x60, 0x48, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x88, ...Array<number>(16).fill(0), 0x9c, 0x40, 0, 80]);
    const length = addresses.length + tlvs.length;
    const header = Buffer.concat([
      Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x21, length >> 8, length & 0xff]),
      addresses,
      tlvs,
    ]);
    const text = await exchange(server.port, Buffer.concat([header, Buffer.from(REQUEST)]));
    expect(body(text).data.address).toBe('2001:4860:4860::8888');
    expect(body(text).data.connection).toEqual({ provider_colo: null, http_protocol: 'HTTP/2', tls_version: 'TLSv1.3' });
  });

  it('an untrusted peer cannot use a PROXY header to claim another address', async () => {
    const text = await exchange(server.port, `PROXY TCP4 8.8.8.8 127.0.0.1 40000 80\r\n${REQUEST}`, '127.0.0.2');
    expect(text).toMatch(/^HTTP\/1\.1 400/);
    expect(text).not.toContain('8.8.8.8');
  });

  it('an untrusted peer speaking plain HTTP is served as itself', async () => {
    const text = await exchange(server.port, REQUEST, '127.0.0.2');
    expect(body(text).data.address).toBe('127.0.0.2');
    expect(body(text).data.connection.http_protocol).toBe('HTTP/1.1');
  });

  it('the trusted proxy must send a header: without one the connection is closed unanswered', async () => {
    expect(await exchange(server.port, REQUEST)).toBe('');
  });
});
