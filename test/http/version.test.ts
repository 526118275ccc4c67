// http_protocol reports what the connection is, not what a request line claims: an
// HTTP/1 message whose request line names HTTP/2.0 (Node's parser accepts it) is not HTTP/2.
// Raw sockets write the request lines; a real HTTP/2 client checks the HTTP/2 side.
import { connect as http2Connect } from 'node:http2';
import { connect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const withOpenssl = requireCommands('HTTPS request lines', ['openssl'], 'openssl');

const requestLine = (version: string) => `GET /v1/ip ${version}\r\nHost: api.test\r\nConnection: close\r\n\r\n`;

/** Writes `text` on a fresh connection (plain, or TLS offering only http/1.1) and reads until the server closes. */
function exchange(port: number, text: string, tls: boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls ? tlsConnect({ port, host: '127.0.0.1', rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : connect({ port, host: '127.0.0.1' });
    let answer = '';
    socket.once(tls ? 'secureConnect' : 'connect', () => socket.write(text));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => {
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

const connectionOf = (answer: string) => {
  expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  return (JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { data: { connection: { http_protocol: string | null; tls_version: string | null } } }).data.connection;
};

describe('http_protocol on a plain HTTP/1 listener', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('an HTTP/1 request line naming HTTP/2.0 is not reported as HTTP/2: null, the message names no HTTP/1 version', async () => {
    expect(connectionOf(await exchange(server.port, requestLine('HTTP/2.0'), false)).http_protocol).toBeNull();
  });

  it('HTTP/1.0 and HTTP/1.1 are reported as such; HTTP/0.9, also accepted by the parser, is not a version to report', async () => {
    expect(connectionOf(await exchange(server.port, requestLine('HTTP/1.1'), false)).http_protocol).toBe('HTTP/1.1');
    expect(connectionOf(await exchange(server.port, requestLine('HTTP/1.0'), false)).http_protocol).toBe('HTTP/1.0');
    expect(connectionOf(await exchange(server.port, requestLine('HTTP/0.9'), false)).http_protocol).toBeNull();
  });
});

describe.skipIf(!withOpenssl)('http_protocol on the TLS listener (HTTP/2 and HTTP/1.1 by ALPN)', () => {
  let server: TestServer;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    server = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
  });
  afterAll(() => server.close());

  it('an HTTP/1.1 connection (ALPN http/1.1) whose request line names HTTP/2.0 is not reported as HTTP/2', async () => {
    const connection = connectionOf(await exchange(server.port, requestLine('HTTP/2.0'), true));
    expect(connection.http_protocol).toBeNull();
    expect(connection.tls_version).toMatch(/^TLSv1\.[23]$/);
    expect(connectionOf(await exchange(server.port, requestLine('HTTP/1.1'), true)).http_protocol).toBe('HTTP/1.1');
  });

  it('a real HTTP/2 connection is reported as HTTP/2', async () => {
    const session = http2Connect(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': '/v1/ip' });
        let data = '';
        stream.on('data', (chunk: Buffer) => (data += chunk.toString()));
        stream.on('end', () => {
          resolve(data);
        });
        stream.on('error', reject);
      });
      expect((JSON.parse(text) as { data: { connection: { http_protocol: string } } }).data.connection.http_protocol).toBe('HTTP/2');
    } finally {
      session.close();
    }
  });
});
