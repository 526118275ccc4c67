// The HTTP/2 flow-control windows `netdiag serve` gives a session (src/runtime/node/adapter/server.ts,
// sizeWindows). A session that carries a responsiveness request keeps the protocol's default 65 535
// bytes, stream and connection, so a client cannot queue more upload than that ahead of its own
// self probe (draft-ietf-ippm-responsiveness; RFC 9113 §6.9); every other session gets 1 MiB a
// stream and 8 MiB a connection, so a speed-test upload is not held to 64 KiB a round trip. What
// the client may send is read on Node's own HTTP/2 client: the server's SETTINGS
// (`remoteSettings.initialWindowSize`, every stream's window) and its connection send window
// (`state.remoteWindowSize`), over TLS to the real server on loopback.
import { connect, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDelayRelay } from '../support/delay-relay.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const haveOpenssl = requireCommands('HTTP/2 windows', ['openssl'], 'openssl');

/** RFC 9113 §6.9.2: the initial window of every stream and of the connection. */
const PROTOCOL_DEFAULT = 65_535;
const MIB = 1024 * 1024;

/** Sends `headers` (and `body`, when given, then ends); resolves with the status once the answer has ended. */
function exchange(stream: ClientHttp2Stream, body?: Buffer[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let status = 0;
    stream.on('response', (h: IncomingHttpHeaders) => (status = Number(h[':status'])));
    stream.on('end', () => {
      resolve(status);
    });
    stream.on('error', reject);
    stream.resume();
    if (body !== undefined) {
      for (const chunk of body) stream.write(chunk);
      stream.end();
    }
  });
}

function request(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer[]): Promise<number> {
  return exchange(session.request(headers, { endStream: body === undefined }), body);
}

/** What the server lets this client send unread: every stream's window, and what is left of the connection's. */
function sendWindows(session: ClientHttp2Session): { stream: number | undefined; connection: number | undefined } {
  return { stream: session.remoteSettings.initialWindowSize, connection: session.state.remoteWindowSize };
}

describe.skipIf(!haveOpenssl)('HTTP/2 flow-control windows of `netdiag serve`', () => {
  let server: TestServer;
  let origin: string;
  const sessions: ClientHttp2Session[] = [];
  const open = (to = origin): ClientHttp2Session => {
    const session = connect(to, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    sessions.push(session);
    return session;
  };
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    server = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile, NETDIAG_RATE_LIMITS: 'rpm=100000,speedtest=100000', ...LOOPBACK_TRANSFERS });
    origin = `https://127.0.0.1:${String(server.port)}`;
  });
  afterAll(async () => {
    for (const session of sessions) session.close();
    await server.close();
  });

  describe('a session that carries a responsiveness request keeps the protocol default windows', () => {
    it.each(['/nq/small', '/.well-known/nq', '/nq/small?probe=1'])('GET %s first: 65 535 bytes a stream and for the connection', async (path) => {
      const session = open();
      expect(await request(session, { ':path': path })).toBe(200);
      // The server's SETTINGS went out before its answer, on the same connection.
      expect(sendWindows(session)).toEqual({ stream: PROTOCOL_DEFAULT, connection: PROTOCOL_DEFAULT });
    });

    it('POST /nq/upload first: lowered before its body is sent, and the upload is still read whole', async () => {
      const session = open();
      const upload = session.request({ ':path': '/nq/upload', ':method': 'POST', 'content-type': 'application/octet-stream' }, { endStream: false });
      // An answer on the same connection comes after whatever the server sent on seeing the
      // upload's headers (its SETTINGS among it), and the upload has sent no byte yet.
      expect(await request(session, { ':path': '/v1/health' })).toBe(200);
      expect(sendWindows(session)).toEqual({ stream: PROTOCOL_DEFAULT, connection: PROTOCOL_DEFAULT });
      expect(await exchange(upload, Array<Buffer>(4).fill(Buffer.alloc(MIB)))).toBe(200);
      // The server read 4 MiB and gave back only what it read: no more credit than the default.
      expect(session.state.remoteWindowSize).toBeLessThanOrEqual(PROTOCOL_DEFAULT);
    });

    it('a session that turns to the responsiveness endpoints after a speed-test request has its stream windows lowered too', async () => {
      const session = open();
      expect(await request(session, { ':path': '/__down?bytes=1000' })).toBe(200);
      expect(await request(session, { ':path': '/nq/small' })).toBe(200);
      // The connection's 8 MiB, once granted, cannot be taken back (RFC 9113 §6.9.1): only the
      // stream windows, which new SETTINGS lower (§6.9.2).
      expect(sendWindows(session).stream).toBe(PROTOCOL_DEFAULT);
    });
  });

  describe('every other session gets 1 MiB a stream and 8 MiB for the connection', () => {
    it('a session that asks only for a speed-test download', async () => {
      const session = open();
      expect(await request(session, { ':path': '/__down?bytes=1000' })).toBe(200);
      expect(await request(session, { ':path': '/v1/health' })).toBe(200);
      expect(sendWindows(session)).toEqual({ stream: MIB, connection: 8 * MIB });
    });

    it('an upload over a 50 ms round trip is not held to the default 64 KiB a round trip', async () => {
      const relay = await startDelayRelay({ host: '127.0.0.1', port: server.port }, 25);
      try {
        const session = open(`https://127.0.0.1:${String(relay.port)}`);
        expect(await request(session, { ':path': '/__down?bytes=1000' })).toBe(200);
        // 8 MiB at 64 KiB a round trip would take 128 round trips, 6.4 s; 1 MiB a stream and
        // 8 MiB a connection let it go in a few.
        const started = performance.now();
        const status = await request(session, { ':path': '/__up', ':method': 'POST', 'content-type': 'application/octet-stream' }, Array<Buffer>(8).fill(Buffer.alloc(MIB)));
        const seconds = (performance.now() - started) / 1000;
        expect(status).toBe(200);
        expect(seconds).toBeLessThan(3.2);
      } finally {
        await relay.close();
      }
    });
  });
});
