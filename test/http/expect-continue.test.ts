// `Expect: 100-continue` (RFC 9110 §10.1.1). A request whose declared length is over its bound
// (4 KiB for the events intake, the speed-test maximum for `/__up`) was sent `100 Continue`, which
// invites the body, and then 413. It now gets its final status at once, with no 100; a request
// within the bound still gets its 100, then its answer once the body is sent. Raw sockets on plain
// HTTP/1.1 (so the bytes on the wire are what is checked) and Node's HTTP/2 client over TLS.
import { randomUUID } from 'node:crypto';
import { connect as connectH2, type ClientHttp2Session, type ClientHttp2Stream, type OutgoingHttpHeaders } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_EVENT_BYTES } from '../../src/features/events/body.js';
import { MAX_BYTES_PER_REQUEST } from '../../src/features/speedtest/configuration.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const haveOpenssl = requireCommands('Expect: 100-continue over HTTP/2', ['openssl'], 'openssl');
const LIMITS = { NETDIAG_RATE_LIMITS: 'events=1000,speedtest=1000' };
const EVENT = JSON.stringify({ event: 'speed_test_started', event_id: randomUUID(), properties: { source: 'cli' } });

/** A raw connection: everything received so far, a wait for some text, and the close. */
interface Raw {
  socket: Socket;
  received(): string;
  /** Resolves once what has been received contains `text`. */
  until(text: string): Promise<void>;
  closed: Promise<void>;
}

async function raw(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  let text = '';
  const waiters: { text: string; resolve: () => void }[] = [];
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    for (const w of waiters.splice(0)) {
      if (text.includes(w.text)) w.resolve();
      else waiters.push(w);
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      resolve();
    });
  });
  return {
    socket,
    received: () => text,
    until: (wanted) =>
      new Promise<void>((resolve, reject) => {
        if (text.includes(wanted)) resolve();
        else {
          waiters.push({ text: wanted, resolve });
          void closed.then(() => {
            reject(new Error(`closed before ${JSON.stringify(wanted)}; got ${JSON.stringify(text.slice(0, 200))}`));
          });
        }
      }),
    closed,
  };
}

const head = (path: string, length: number, extra: string[] = []) =>
  [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Length: ${String(length)}`, 'Expect: 100-continue', ...extra, '', ''].join('\r\n');

const JSON_TYPE = 'Content-Type: application/json';

describe('Expect: 100-continue on HTTP/1.1', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(LIMITS);
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['/v1/events', MAX_EVENT_BYTES + 1, [JSON_TYPE]],
    ['/__up', MAX_BYTES_PER_REQUEST + 1, []],
  ])('POST %s declaring %i bytes: 413 at once, no 100, the connection closed', async (path, length, extra) => {
    const c = await raw(server.port);
    c.socket.write(head(path, length, extra));
    // No body is ever sent: a server waiting for it would hold the connection open.
    await c.closed;
    const text = c.received();
    expect(text.slice(0, text.indexOf('\r\n'))).toBe('HTTP/1.1 413 Payload Too Large');
    expect(text).not.toContain('100 Continue');
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    const problem = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
    expect(problem).toMatchObject({ status: 413, code: 'payload_too_large' });
  });

  it('a refusal on the media type is final at once as well (415, no 100)', async () => {
    const c = await raw(server.port);
    c.socket.write(head('/v1/events', EVENT.length, ['Content-Type: text/plain']));
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 415 /);
    expect(c.received()).not.toContain('100 Continue');
  });

  it('an event within the bound gets 100 Continue, then 202 once its body is sent', async () => {
    const c = await raw(server.port);
    c.socket.write(head('/v1/events', Buffer.byteLength(EVENT), [JSON_TYPE, 'Connection: close']));
    await c.until('\r\n\r\n');
    expect(c.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.write(EVENT);
    await c.closed;
    const final = c.received().slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
    expect(final).toMatch(/^HTTP\/1\.1 202 /);
    expect(JSON.parse(final.slice(final.indexOf('\r\n\r\n') + 4))).toMatchObject({ data: { accepted: true } });
  });

  it('an upload within the bound gets 100 Continue, then 200 once its body is sent', async () => {
    const c = await raw(server.port);
    c.socket.write(head('/__up', 100_000, ['Connection: close']));
    await c.until('\r\n\r\n');
    expect(c.received()).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    c.socket.write(Buffer.alloc(100_000));
    await c.closed;
    expect(c.received().slice('HTTP/1.1 100 Continue\r\n\r\n'.length)).toMatch(/^HTTP\/1\.1 200 /);
  });
});

interface H2Outcome {
  continued: boolean;
  status: number;
  body: string;
}

/** Sends a request head with `expect: 100-continue`; the body only if the server sends 100. */
function h2Request(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body: Buffer): Promise<H2Outcome> {
  return new Promise((resolve, reject) => {
    const stream: ClientHttp2Stream = session.request({ ':method': 'POST', expect: '100-continue', 'content-length': String(body.length), ...headers }, { endStream: false });
    let continued = false;
    let status = 0;
    let text = '';
    stream.on('continue', () => {
      continued = true;
      stream.end(body);
    });
    stream.on('response', (h) => {
      status = Number(h[':status']);
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (text += chunk));
    stream.on('end', () => {
      resolve({ continued, status, body: text });
    });
    stream.on('error', reject);
  });
}

describe.skipIf(!haveOpenssl)('Expect: 100-continue on HTTP/2', () => {
  let server: TestServer;
  let session: ClientHttp2Session;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    server = await startTestServer({ ...LIMITS, NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
    session = connectH2(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
    session.on('error', () => undefined);
  });
  afterAll(async () => {
    session.close();
    await server.close();
  });

  it('an event declared over the bound: 413 with no 100', async () => {
    const outcome = await h2Request(session, { ':path': '/v1/events', 'content-type': 'application/json', 'content-length': String(MAX_EVENT_BYTES + 1) }, Buffer.alloc(0));
    expect(outcome).toMatchObject({ continued: false, status: 413 });
    expect(JSON.parse(outcome.body)).toMatchObject({ code: 'payload_too_large' });
  });

  it('an upload declared over the bound: 413 with no 100', async () => {
    const outcome = await h2Request(session, { ':path': '/__up', 'content-length': String(MAX_BYTES_PER_REQUEST + 1) }, Buffer.alloc(0));
    expect(outcome).toMatchObject({ continued: false, status: 413 });
  });

  it('an event within the bound: 100, then 202', async () => {
    const outcome = await h2Request(session, { ':path': '/v1/events', 'content-type': 'application/json' }, Buffer.from(EVENT));
    expect(outcome).toMatchObject({ continued: true, status: 202 });
  });
});
