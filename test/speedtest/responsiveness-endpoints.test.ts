// The endpoints of draft-ietf-ippm-responsiveness (src/features/speedtest/responsiveness.ts) on the
// real Node server: the configuration at /.well-known/nq and the three URLs it names, followed as a
// client would, over plain HTTP/1.1 and over TLS with HTTP/2 (what the draft's clients speak).
import { request } from 'node:http';
import { connect as http2Connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

interface Configuration {
  version: number;
  urls: Record<string, string>;
}

const KEYS = ['small_download_url', 'large_download_url', 'upload_url', 'small_https_download_url', 'large_https_download_url', 'https_upload_url'];
const EIGHT_GIB = String(8 * 1024 ** 3);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: number;
  text: string;
}

/** One HTTP/1.1 request; reads at most `readAtMost` bytes of the answer, then closes the connection. */
function get(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer[]; readAtMost?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers: options.headers, agent: false }, (res) => {
      let bytes = 0;
      let text = '';
      const done = () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text });
      };
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (text.length < 4000) text += chunk.toString('latin1');
        if (options.readAtMost !== undefined && bytes >= options.readAtMost) {
          req.destroy();
          done();
        }
      });
      res.on('end', done);
      res.on('error', () => undefined);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    for (const chunk of options.body ?? []) req.write(chunk);
    req.end();
  });
}

describe('/.well-known/nq over HTTP/1.1', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'rpm=100000' });
  });
  afterAll(() => server.close());

  it('answers the draft\'s configuration: version 1 and both key sets, each URL on the origin the request named', async () => {
    const res = await get(`${server.url}/.well-known/nq`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['cache-control']).toBe('no-store, no-transform');
    expect(res.headers['access-control-allow-origin']).toBe('*');
    const config = JSON.parse(res.text) as Configuration;
    expect(config.version).toBe(1);
    expect(Object.keys(config.urls).sort()).toEqual([...KEYS].sort());
    expect(config.urls.small_download_url).toBe(`${server.url}/nq/small`);
    expect(config.urls.large_download_url).toBe(`${server.url}/nq/large`);
    expect(config.urls.upload_url).toBe(`${server.url}/nq/upload`);
    expect(config.urls.small_https_download_url).toBe(config.urls.small_download_url);
    expect(config.urls.large_https_download_url).toBe(config.urls.large_download_url);
    expect(config.urls.https_upload_url).toBe(config.urls.upload_url);
  });

  it('the small object is one byte, the large one declares 8 GiB and streams until the client closes, neither coded', async () => {
    const config = JSON.parse((await get(`${server.url}/.well-known/nq`)).text) as Configuration;
    const small = await get(config.urls.small_download_url ?? '', { headers: { 'Accept-Encoding': 'gzip, br' } });
    expect([small.status, small.bytes, small.headers['content-length'], small.headers['content-encoding']]).toEqual([200, 1, '1', undefined]);
    expect(small.headers['content-type']).toBe('application/octet-stream');
    const large = await get(config.urls.large_download_url ?? '', { headers: { 'Accept-Encoding': 'gzip, br' }, readAtMost: 30_000_000 });
    expect([large.status, large.headers['content-length'], large.headers['content-encoding']]).toEqual([200, EIGHT_GIB, undefined]);
    expect(large.bytes).toBeGreaterThanOrEqual(30_000_000);
    // Still serving after a client closed mid-body.
    expect((await get(`${server.url}/nq/small`)).status).toBe(200);
  });

  it('the upload target reads a sized or chunked body of any type to its end; one declared over 8 GiB is 413 with a problem', async () => {
    const mb = Buffer.alloc(1024 * 1024, 0x61);
    const sized = await get(`${server.url}/nq/upload`, { method: 'POST', headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(40 * mb.length) }, body: Array<Buffer>(40).fill(mb) });
    expect(sized.status).toBe(200);
    const chunked = await get(`${server.url}/nq/upload`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: Array<Buffer>(10).fill(mb) });
    expect(chunked.status).toBe(200);
    const tooLarge = await get(`${server.url}/nq/upload`, { method: 'POST', headers: { 'Content-Length': String(8 * 1024 ** 3 + 1) } });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.text).toContain('8589934592 bytes /nq/upload reads');
  });

  it('a GET of the upload target or a POST to the configuration is 405 with the method allowed', async () => {
    expect((await get(`${server.url}/nq/upload`)).status).toBe(405);
    const post = await get(`${server.url}/.well-known/nq`, { method: 'POST', body: [Buffer.from('{}')] });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toContain('GET');
  });
});

describe('/.well-known/nq with the operator\'s settings', () => {
  it('names the public URL when one is set, whatever Host the request carried', async () => {
    const server = await startTestServer({ NETDIAG_PUBLIC_URL: 'https://speed.example.net', NETDIAG_RATE_LIMITS: 'rpm=100000' });
    try {
      const config = JSON.parse((await get(`${server.url}/.well-known/nq`, { headers: { Host: 'other.test' } })).text) as Configuration;
      expect(config.urls.large_download_url).toBe('https://speed.example.net/nq/large');
    } finally {
      await server.close();
    }
  });

  it('counts against its own limit (rpm): past it, 429 with a problem', async () => {
    const server = await startTestServer({ NETDIAG_RATE_LIMITS: 'rpm=2' });
    try {
      const statuses = [];
      for (const path of ['/.well-known/nq', '/nq/small', '/nq/small']) statuses.push((await get(`${server.url}${path}`)).status);
      expect(statuses).toEqual([200, 200, 429]);
    } finally {
      await server.close();
    }
  });

  it('with the speed-test targets off, each path is 404 saying why', async () => {
    const server = await startTestServer({ NETDIAG_SPEEDTEST_TARGETS: 'off' });
    try {
      for (const path of ['/.well-known/nq', '/nq/small', '/nq/large']) {
        const res = await get(`${server.url}${path}`);
        expect(res.status).toBe(404);
        expect(res.text).toContain('turned off');
      }
    } finally {
      await server.close();
    }
  });
});

const withOpenssl = requireCommands('the responsiveness endpoints over HTTP/2', ['openssl'], 'openssl');

/** One HTTP/2 request on `session`: status, headers and how many body bytes (at most `readAtMost`, then the stream is cancelled). */
function h2(session: ClientHttp2Session, headers: Record<string, string>, options: { body?: Buffer[]; readAtMost?: number } = {}): Promise<{ headers: IncomingHttpHeaders; bytes: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: options.body === undefined });
    let answer: IncomingHttpHeaders = {};
    let bytes = 0;
    let text = '';
    stream.on('response', (h) => (answer = h));
    stream.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (text.length < 4000) text += chunk.toString('latin1');
      if (options.readAtMost !== undefined && bytes >= options.readAtMost) {
        stream.close();
        resolve({ headers: answer, bytes, text });
      }
    });
    stream.on('end', () => {
      resolve({ headers: answer, bytes, text });
    });
    stream.on('error', reject);
    if (options.body !== undefined) {
      for (const chunk of options.body) stream.write(chunk);
      stream.end();
    }
  });
}

describe.skipIf(!withOpenssl)('/.well-known/nq over TLS with HTTP/2', () => {
  let server: TestServer;
  let session: ClientHttp2Session;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    server = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile, NETDIAG_RATE_LIMITS: 'rpm=100000' });
    session = http2Connect(`https://127.0.0.1:${String(server.port)}`, { rejectUnauthorized: false });
  });
  afterAll(async () => {
    session.close();
    await server.close();
  });

  it('serves the configuration with https URLs, and its three URLs, on one HTTP/2 connection', async () => {
    const config = await h2(session, { ':path': '/.well-known/nq' });
    expect(config.headers[':status']).toBe(200);
    const urls = (JSON.parse(config.text) as Configuration).urls;
    expect(urls.large_https_download_url).toBe(`https://127.0.0.1:${String(server.port)}/nq/large`);
    const path = (url: string | undefined) => new URL(url ?? '').pathname;
    // The large download runs while the small one is asked on the same connection: a self probe.
    const large = h2(session, { ':path': path(urls.large_download_url), 'accept-encoding': 'identity' }, { readAtMost: 20_000_000 });
    const small = await h2(session, { ':path': path(urls.small_download_url), 'accept-encoding': 'identity' });
    expect([small.headers[':status'], small.bytes]).toEqual([200, 1]);
    const big = await large;
    expect([big.headers[':status'], big.headers['content-length'], big.headers['content-encoding']]).toEqual([200, EIGHT_GIB, undefined]);
    expect(big.bytes).toBeGreaterThanOrEqual(20_000_000);
    const up = await h2(session, { ':path': path(urls.upload_url), ':method': 'POST', 'content-type': 'application/octet-stream' }, { body: Array<Buffer>(20).fill(Buffer.alloc(1024 * 1024)) });
    expect(up.headers[':status']).toBe(200);
  });
});
