// The request header bound (16 KiB, MAX_HEADER_BYTES) on HTTP/2. Node announces it as
// SETTINGS_MAX_HEADER_LIST_SIZE but applies it only once the client has acknowledged it; a
// client's first flight (the first request of every connection) was held to nghttp2's 64 KiB and
// blocks of 20-64 KB reached the app. Such a block now gets the 431 problem HTTP/1 gets
// (RFC 9113 §10.5.1); after the acknowledgement Node resets the stream itself. Either way the
// connection keeps serving. Node's own HTTP/2 client over TLS (a self-signed certificate).
import { randomBytes } from 'node:crypto';
import { connect, constants as h2, type ClientHttp2Session, type OutgoingHttpHeaders } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HEADER_BYTES } from '../../src/runtime/node/adapter/server.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const haveOpenssl = requireCommands('HTTP/2 header bound', ['openssl'], 'openssl');

interface H2Reply {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

function get(session: ClientHttp2Session, headers: OutgoingHttpHeaders): Promise<H2Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': '/v1/health', ...headers });
    let status = 0;
    let received: Record<string, unknown> = {};
    let body = '';
    stream.on('response', (h) => {
      status = Number(h[':status']);
      received = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      resolve({ status, headers: received, body });
    });
    stream.on('error', reject);
    stream.on('frameError', (type: number, code: number) => {
      reject(new Error(`frame error ${String(type)} ${String(code)}`));
    });
  });
}

/** A header value of `bytes` random hex characters: HPACK's Huffman code cannot make it small. */
const filler = (bytes: number) => randomBytes(bytes / 2).toString('hex');

function expectHeaderProblem(reply: H2Reply | { status: number; headers: Record<string, unknown>; body: string }): void {
  expect(reply.status).toBe(431);
  expect(reply.headers['content-type']).toBe('application/problem+json');
  const problem = JSON.parse(reply.body) as Record<string, unknown>;
  expect(problem).toMatchObject({ status: 431, code: 'header_fields_too_large', title: 'Request header fields too large' });
  expect(problem.detail).toContain(String(MAX_HEADER_BYTES));
  expect(problem.type).toMatch(/\/problems\/header_fields_too_large$/);
  expect(reply.headers['x-request-id']).toBe(problem.request_id);
}

/** A new session, not yet connected: a request made now goes out in the client's first flight. */
function fresh(server: TestServer): ClientHttp2Session {
  const session = connect(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
  session.on('error', () => undefined);
  return session;
}

/** A stream the server resets before answering: its RST_STREAM code. */
function resetCode(session: ClientHttp2Session, headers: OutgoingHttpHeaders): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': '/v1/health', ...headers });
    stream.on('response', () => {
      reject(new Error('answered instead of reset'));
    });
    stream.on('error', () => undefined);
    stream.on('close', () => {
      resolve(stream.rstCode);
    });
    stream.resume();
  });
}

describe.skipIf(!haveOpenssl)('HTTP/2 holds the 16 KiB header bound', () => {
  let server: TestServer;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    server = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
  });
  afterAll(async () => {
    await server.close();
  });

  describe("in the client's first flight, before it has acknowledged the bound", () => {
    it('a header block well under the bound is served', async () => {
      const session = fresh(server);
      try {
        const reply = await get(session, { 'x-filler': filler(12 * 1024) });
        expect(reply.status).toBe(200);
        expect(JSON.parse(reply.body)).toMatchObject({ data: { status: 'ok' } });
      } finally {
        session.close();
      }
    });

    it.each([20, 60])('a %i KB header block is answered 431 with the problem, and the connection still serves', async (kb) => {
      const session = fresh(server);
      try {
        expectHeaderProblem(await get(session, { 'x-filler': filler(kb * 1024) }));
        // The same session: the field block was decoded whole, so HPACK state is intact.
        expect((await get(session, {})).status).toBe(200);
      } finally {
        session.close();
      }
    });

    it('many small fields adding up past the bound count as one block (32 octets each, RFC 9113 §6.5.2)', async () => {
      const headers: OutgoingHttpHeaders = {};
      // 100 fields of 170 octets each (name, value, overhead): 17,000 in all, no single one large.
      for (let i = 0; i < 100; i++) headers[`x-f${String(i).padStart(3, '0')}`] = filler(134);
      const session = fresh(server);
      try {
        expectHeaderProblem(await get(session, headers));
      } finally {
        session.close();
      }
    });
  });

  describe('after the client has acknowledged the bound', () => {
    let session: ClientHttp2Session;
    beforeAll(async () => {
      session = fresh(server);
      // The client acknowledges our SETTINGS as it receives them, before any later request.
      const settings = await new Promise<{ maxHeaderListSize?: number }>((resolve) => session.once('remoteSettings', resolve));
      expect(settings.maxHeaderListSize).toBe(MAX_HEADER_BYTES);
    });
    afterAll(() => {
      session.close();
    });

    it('a larger block has its stream reset (ENHANCE_YOUR_CALM) and the connection still serves', async () => {
      expect(await resetCode(session, { 'x-filler': filler(20 * 1024) })).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
      expect((await get(session, { 'x-filler': filler(12 * 1024) })).status).toBe(200);
    });
  });

  it('HTTP/1.1 on the same TLS listener answers the same 431', async () => {
    const reply = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port: server.port, path: '/v1/health', rejectUnauthorized: false, headers: { 'x-filler': filler(20 * 1024) } },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expectHeaderProblem(reply);
  });
});
