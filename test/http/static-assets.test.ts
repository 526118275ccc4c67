// The page's script and style and the OpenAPI document, served as a web server serves files
// (src/core/http/static-asset.ts): Brotli or gzip by the client's Accept-Encoding, `Vary:
// Accept-Encoding`, an entity tag per form and a 304 for a client that holds it; the API's own
// answers unchanged. Over a real socket with Node's client and curl; a reload in Chromium moves
// none of them again.
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const exec = promisify(execFile);
const ASSETS = ['/app.js', '/app.css', '/v1/openapi.json'] as const;

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** A request with exactly these headers (Node's http client adds no Accept-Encoding), the body as sent. */
function raw(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe.each(ASSETS)('%s', (path) => {
  it('is Brotli for a browser, gzip for a client that takes only gzip, as is for one that names none: the same text each way', async () => {
    const identity = await raw(path);
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('Accept-Encoding');
    const text = identity.body.toString('utf8');
    expect(text.length).toBeGreaterThan(1000);

    const br = await raw(path, { 'Accept-Encoding': 'gzip, deflate, br, zstd' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(brotliDecompressSync(br.body).toString('utf8')).toBe(text);

    const gzip = await raw(path, { 'Accept-Encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).toString('utf8')).toBe(text);

    // Refused by quality: br;q=0 leaves gzip; both refused leaves the text itself.
    expect((await raw(path, { 'Accept-Encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe('gzip');
    const neither = await raw(path, { 'Accept-Encoding': 'br;q=0, gzip;q=0' });
    expect(neither.headers['content-encoding']).toBeUndefined();
    expect(neither.body.toString('utf8')).toBe(text);

    // Each form its own tag (RFC 9110 §8.8.3), all strong.
    const tags = [identity, br, gzip].map((r) => r.headers.etag);
    expect(new Set(tags).size).toBe(3);
    for (const tag of tags) expect(tag).toMatch(/^"[A-Za-z0-9_-]+"$/);
  });

  it('answers 304 with no body to a client that holds the form it would get, and 200 to one that holds another', async () => {
    const first = await raw(path, { 'Accept-Encoding': 'br' });
    const etag = String(first.headers.etag);
    const again = await raw(path, { 'Accept-Encoding': 'br', 'If-None-Match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    expect(again.headers['cache-control']).toBe(first.headers['cache-control']);
    // A weak form of the tag matches too (If-None-Match compares weakly, §13.1.2), and so does `*`.
    expect((await raw(path, { 'Accept-Encoding': 'br', 'If-None-Match': `"other", W/${etag}` })).status).toBe(304);
    expect((await raw(path, { 'If-None-Match': '*' })).status).toBe(304);
    // The Brotli form's tag does not stand for the gzip form.
    const gzip = await raw(path, { 'Accept-Encoding': 'gzip', 'If-None-Match': etag });
    expect(gzip.status).toBe(200);
    expect(gzip.headers['content-encoding']).toBe('gzip');
  });

  it('HEAD gives the GET\'s headers, its Content-Length for the form chosen, and no body', async () => {
    const get = await raw(path, { 'Accept-Encoding': 'br' });
    const head = await raw(path, { 'Accept-Encoding': 'br' }, 'HEAD');
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['content-encoding']).toBe('br');
  });
});

describe("the page's HTML", () => {
  it('is compressed per request for a browser (it carries the caller\'s address), and says it varies by both headers', async () => {
    const plain = await raw('/', { Accept: 'text/html' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept, Accept-Encoding');
    const br = await raw('/', { Accept: 'text/html', 'Accept-Encoding': 'gzip, deflate, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept, Accept-Encoding');
    expect(br.headers['cache-control']).toBe('no-store');
    const html = brotliDecompressSync(br.body).toString('utf8');
    expect(html).toBe(plain.body.toString('utf8'));
    expect(html).toContain('<output id="address">127.0.0.1</output>');
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    const gzip = await raw('/', { Accept: 'text/html', 'Accept-Encoding': 'gzip' });
    expect(gunzipSync(gzip.body).toString('utf8')).toBe(html);
  });
});

describe('the bytes a first load moves', () => {
  it("an English reader's first load (the HTML, script and style) moves at most 40% of their bytes as text", async () => {
    let plain = 0;
    let brotli = 0;
    for (const path of ['/', '/app.js', '/app.css']) {
      plain += (await raw(path, { Accept: 'text/html' })).body.length;
      brotli += (await raw(path, { Accept: 'text/html', 'Accept-Encoding': 'gzip, deflate, br' })).body.length;
    }
    process.stdout.write(`first load: ${String(plain)} bytes as text, ${String(brotli)} with Brotli (${((100 * brotli) / plain).toFixed(1)}%)\n`);
    expect(brotli).toBeLessThanOrEqual(plain * 0.4);
  });

  it('an API answer is as it was: no Content-Encoding, no ETag', async () => {
    const res = await raw('/v1/health', { 'Accept-Encoding': 'gzip, br' });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers.etag).toBeUndefined();
  });
});

describe.skipIf(!requireCommands('compressed assets with curl', ['curl'], 'curl'))('curl', () => {
  it('with --compressed gets the document decoded to the same bytes as without', async () => {
    const { stdout: plain } = await exec('curl', ['-s', `${server.url}/v1/openapi.json`]);
    const { stdout: compressed } = await exec('curl', ['-s', '--compressed', `${server.url}/v1/openapi.json`]);
    expect(compressed).toBe(plain);
    const { stdout: headers } = await exec('curl', ['-s', '--compressed', '-o', '/dev/null', '-D', '-', `${server.url}/v1/openapi.json`]);
    expect(headers).toMatch(/^content-encoding: (br|gzip)\r$/im);
  });
});

describe.skipIf(!requireCommands('asset revalidation in chromium', ['chromium'], 'chromium'))('a reload in Chromium', () => {
  it("moves none of the page's assets again: the server is not asked, or, asked to check, answers 304", async () => {
    // The server's own count of what it answered, by route and status (its /metrics).
    const counted = await startTestServer({ NETDIAG_METRICS_PORT: '0' });
    const answered = async () => {
      const text = await (await fetch(`http://127.0.0.1:${String(counted.running.metricsPort)}/metrics`)).text();
      const count = (route: string, status: string) => Number(new RegExp(`^netdiag_http_requests_total\\{route="${route}",method="GET",status="${status}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
      return { js200: count('/app.js', '200'), css200: count('/app.css', '200'), js304: count('/app.js', '304'), css304: count('/app.css', '304') };
    };
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    try {
      const page = await browser.newPage();
      await page.goto(`${counted.url}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      const first = await answered();
      expect(first).toMatchObject({ js200: 1, css200: 1 });
      await page.reload();
      await page.waitForSelector('#speed-start:not([disabled])');
      const after = await answered();
      process.stdout.write(`reload: app.js ${String(after.js304 - first.js304)} × 304, app.css ${String(after.css304 - first.css304)} × 304\n`);
      // Not one more 200 for either: each came from the browser's cache or as a 304.
      expect({ js200: after.js200, css200: after.css200 }).toEqual({ js200: 1, css200: 1 });
      // Once the cached copies are stale (or the browser is told to check, as here), it asks with
      // their tags and the server answers 304: still no 200.
      await page.evaluate(() => Promise.all(['/app.js', '/app.css'].map(async (url) => (await fetch(url, { cache: 'no-cache' })).text())));
      const checked = await answered();
      expect(checked).toEqual({ js200: 1, css200: 1, js304: after.js304 + 1, css304: after.css304 + 1 });
    } finally {
      await browser.close();
      await counted.close();
    }
  }, 60_000);
});
