// Problem types that lead somewhere (RFC 9457 §3.1.1): every code of the one
// catalogue is documented at `/problems/<code>`, and the `type` URI of real failing requests of
// many kinds, over real sockets, dereferences to a 200 naming the code's title. A browser's
// Accept gets a page under the page's Content-Security-Policy (checked in Chromium), curl gets
// text; an unknown code is a 404 problem in the form asked for; HEAD; cacheable and never limited.
import { execFile } from 'node:child_process';
import { connect } from 'node:net';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROBLEMS, type ProblemCode } from '../../src/core/http/problems.js';
import { expectContract, expectSchema, openapi } from '../support/contract.js';
import { startFakeDns, type FakeDns } from '../support/fake-dns.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

/** What Chromium sends for a navigation. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';
const CODES = Object.keys(PROBLEMS) as ProblemCode[];
const TEMPLATE = '/problems/{code}';
const knotReady = requireCommands('problem pages: a DNS answer over the bounds', ['knotd'], 'knot');
const chromiumReady = requireCommands('problem pages in chromium', ['chromium'], 'chromium');

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body when it is JSON, else null. */
  body: unknown;
}

async function request(url: string, init: RequestInit = {}): Promise<Reply> {
  const res = await fetch(url, init);
  const text = await res.text();
  const json = (res.headers.get('content-type') ?? '').includes('json') && text !== '';
  return { status: res.status, headers: res.headers, text, body: json ? (JSON.parse(text) as unknown) : null };
}

/** One HTTP/1.1 request written as raw bytes; the whole answer once the server closes. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(bytes);
    });
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('end', () => {
      resolve(answer);
    });
    socket.on('error', reject);
  });
}

function problemOf(res: Reply, code: ProblemCode): { type: string } {
  expect(res.status, res.text).toBe(PROBLEMS[code].status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  const problem = res.body as { code: string; type: string };
  expectSchema('Problem', problem);
  expect(problem.code).toBe(code);
  return problem;
}

/** The `type` URI dereferenced: 200 with the code's title, as text for curl and a page for a browser. */
async function expectDocumented(type: string, code: ProblemCode, server: TestServer): Promise<void> {
  expect(type).toBe(`${server.url}/problems/${code}`);
  const text = await request(type);
  expect(text.status).toBe(200);
  expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8');
  expect(text.text.split('\n')[0]).toBe(`${PROBLEMS[code].title} (${String(PROBLEMS[code].status)}, ${code})`);
  const html = await request(type, { headers: { Accept: BROWSER_ACCEPT } });
  expect(html.status).toBe(200);
  expect(html.headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(html.text).toContain(`<h1>${PROBLEMS[code].title}</h1>`);
}

/** Every limit at most 4: were the problem pages counted against any operation, they would be 429s. */
const TIGHT_LIMITS = 'ip=1,dns=2,probe=2,events=4,speedtest=1';

let server: TestServer;
beforeAll(async () => {
  // The DNS upstream is a closed loopback port (startTestServer's default): lookups are 503.
  server = await startTestServer({ NETDIAG_RATE_LIMITS: TIGHT_LIMITS });
});
afterAll(() => server.close());

describe('every code of the catalogue is documented', () => {
  it('the catalogue is the OpenAPI document\'s list of codes', () => {
    const schema = openapi.components.schemas.Problem as { properties: { code: { enum: string[] } } };
    expect([...schema.properties.code.enum].sort()).toEqual([...CODES].sort());
  });

  it.each(CODES)('/problems/%s: text for curl-like clients, within the contract, cacheable, never limited', async (code) => {
    const entry = PROBLEMS[code];
    const res = await request(`${server.url}/problems/${code}`, { headers: { Accept: '*/*' } });
    expect(res.status).toBe(200);
    expectContract('GET', TEMPLATE, res);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(res.text).toBe(`${entry.title} (${String(entry.status)}, ${code})\n\nWhen it happens: ${entry.when}\n\nWhat to do: ${entry.action}\n`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('vary')).toBe('Accept');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // Not an operation of the API contract: no RateLimit-* header (docs/api.md, "Behaviour notes").
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it.each(CODES)('/problems/%s: a page for a browser, under the page\'s Content-Security-Policy', async (code) => {
    const entry = PROBLEMS[code];
    const res = await request(`${server.url}/problems/${code}`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(200);
    expectContract('GET', TEMPLATE, res);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).toContain(`<h1>${entry.title}</h1>`);
    expect(res.text).toContain(`HTTP status ${String(entry.status)}, problem code <code>${code}</code>.`);
    // The catalogue's sentences, HTML-escaped (apostrophes and quotes among them).
    const escaped = (s: string) => s.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
    expect(res.text).toContain(`<p>${escaped(entry.when)}</p>`);
    expect(res.text).toContain(`<p>${escaped(entry.action)}</p>`);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('the HTML carries exactly the page\'s Content-Security-Policy', async () => {
    const page = await request(`${server.url}/`, { headers: { Accept: BROWSER_ACCEPT } });
    // The page itself is counted against the ip limit (1 here): its policy is read from the first answer.
    expect(page.status).toBe(200);
    const policy = page.headers.get('content-security-policy');
    expect(policy).toMatch(/^default-src 'none'/);
    const res = await request(`${server.url}/problems/not_found`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(res.headers.get('content-security-policy')).toBe(policy);
  });

  it('curl gets the text', async () => {
    // Asynchronous: the server runs in this process, and a synchronous child would block it.
    const { stdout } = await promisify(execFile)('curl', ['-s', '-i', `${server.url}/problems/rate_limit_exceeded`], { encoding: 'utf8' });
    expect(stdout).toMatch(/^HTTP\/1\.1 200 /);
    expect(stdout).toMatch(/^content-type: text\/plain; charset=utf-8\r$/im);
    expect(stdout).toContain('\r\n\r\nRate limit exceeded (429, rate_limit_exceeded)\n\nWhen it happens: ');
  });

  it('HEAD answers the headers of GET with no body, in both forms', async () => {
    for (const accept of ['*/*', BROWSER_ACCEPT]) {
      const get = await request(`${server.url}/problems/upstream_timeout`, { headers: { Accept: accept } });
      const head = await request(`${server.url}/problems/upstream_timeout`, { method: 'HEAD', headers: { Accept: accept } });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(get.text)));
      for (const name of ['content-type', 'cache-control', 'vary', 'content-security-policy']) expect(head.headers.get(name)).toBe(get.headers.get(name));
    }
  });

  it('OPTIONS is a preflight and POST is 405 naming GET', async () => {
    const options = await request(`${server.url}/problems/not_found`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expectContract('OPTIONS', TEMPLATE, options);
    const post = await request(`${server.url}/problems/not_found`, { method: 'POST', body: 'x' });
    problemOf(post, 'method_not_allowed');
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });
});

describe('an unknown code', () => {
  it('is a 404 not_found problem document for curl-like clients, never cached', async () => {
    const res = await request(`${server.url}/problems/no_such_code`);
    const problem = problemOf(res, 'not_found') as { type: string; detail: string };
    expectContract('GET', TEMPLATE, res);
    expect(problem.detail).toBe('No problem code "no_such_code" exists; /v1/openapi.json lists every code.');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('vary')).toBe('Accept');
    await expectDocumented(problem.type, 'not_found', server);
  });

  it('is a 404 page showing the problem document for a browser', async () => {
    const res = await request(`${server.url}/problems/no_such_code`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(404);
    expectContract('GET', TEMPLATE, res);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    expect(res.text).toContain('<h1>Not found</h1>');
    expect(res.text).toContain(`<dt>request_id</dt><dd>${res.headers.get('x-request-id') ?? 'missing'}</dd>`);
    expect(res.text).toContain(`<dt>type</dt><dd><a href="not_found">${server.url}/problems/not_found</a></dd>`);
    expect(res.text).toContain('<dt>status</dt><dd>404</dd>');
  });

  it('names of Object.prototype are not codes', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const res = await request(`${server.url}/problems/${name}`);
      expect(res.status, name).toBe(404);
    }
  });

  it('client text of another shape is never echoed, as a page or as a document', async () => {
    const segment = '%3Cimg%20src%3Dx%20onerror%3Dxyzzy()%3E';
    const html = await request(`${server.url}/problems/${segment}`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(html.status).toBe(404);
    expect(html.text).not.toMatch(/xyzzy|<img|%3C/i);
    const json = await request(`${server.url}/problems/${segment}`);
    expect((json.body as { detail: string }).detail).toBe('This is not a problem code: codes are lower-case letters, digits and underscores; /v1/openapi.json lists every code.');
  });

  it('HEAD is 404 with no body', async () => {
    const head = await request(`${server.url}/problems/no_such_code`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(head.text).toBe('');
  });
});

describe('the type of a real failing request dereferences to its documentation', () => {
  const cases: { code: ProblemCode; send: () => Promise<Reply> }[] = [
    { code: 'not_found', send: () => request(`${server.url}/v2/nothing`) },
    { code: 'method_not_allowed', send: () => request(`${server.url}/v1/health`, { method: 'DELETE' }) },
    { code: 'invalid_parameter', send: () => request(`${server.url}/v1/dns/resolve?name=example.com`) },
    { code: 'upstream_unavailable', send: () => request(`${server.url}/v1/dns/resolve?name=example.com&type=A`) },
    { code: 'unknown_region', send: () => request(`${server.url}/v1/latency/regions/mars/probe`) },
    { code: 'unsupported_media_type', send: () => request(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: '{}' }) },
    { code: 'invalid_json', send: () => request(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' }) },
    {
      code: 'invalid_event',
      send: () => request(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"event":"bogus","event_id":"3b241101-e2bb-4255-8caf-4136c566a962","properties":{"source":"cli"}}' }),
    },
    { code: 'payload_too_large', send: () => request(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(5000) }) },
    { code: 'probe_unavailable', send: () => request(`${server.url}/v1/latency/regions/weur/probe`) },
  ];
  it.each(cases)('$code', async ({ code, send }) => {
    const problem = problemOf(await send(), code);
    await expectDocumented(problem.type, code, server);
  });

  it('rate_limit_exceeded', async () => {
    // probe=2: the third probe of this source in the window is refused.
    let last: Reply | undefined;
    for (let i = 0; i < 3; i++) last = await request(`${server.url}/v1/latency/regions/oc/probe`, { headers: { Connection: 'close' } });
    if (last === undefined) throw new Error('no reply');
    await expectDocumented(problemOf(last, 'rate_limit_exceeded').type, 'rate_limit_exceeded', server);
  });

  it('malformed_request and header_fields_too_large, answered before any route runs', async () => {
    for (const [code, bytes] of [
      ['malformed_request', 'NOT HTTP AT ALL\r\n\r\n'],
      ['header_fields_too_large', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
    ] as const) {
      const answer = await raw(server.port, bytes);
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4);
      const problem = JSON.parse(body) as { code: string; type: string };
      expect(problem.code).toBe(code);
      await expectDocumented(problem.type, code, server);
    }
  });

  describe('from other deployments', () => {
    let proxied: TestServer;
    let garbage: FakeDns;
    let silent: FakeDns;
    let silentServer: TestServer;
    beforeAll(async () => {
      garbage = await startFakeDns('garbage');
      silent = await startFakeDns('silent');
      // Trusted loopback proxy that sends no forwarding header: no caller can be established.
      proxied = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(garbage.port)}` });
      silentServer = await startTestServer({
        NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(silent.port)}`,
        NETDIAG_DNS_TIMEOUT_MS: '300',
        // The shortest header deadline allowed: a header block left unfinished is answered 408.
        NETDIAG_HEADERS_TIMEOUT_MS: '100',
      });
    });
    afterAll(async () => {
      await Promise.all([proxied.close(), silentServer.close()]);
      await Promise.all([garbage.close(), silent.close()]);
    });

    it('connection_unavailable', async () => {
      const problem = problemOf(await request(`${proxied.url}/v1/ip`), 'connection_unavailable');
      await expectDocumented(problem.type, 'connection_unavailable', proxied);
    });

    it('upstream_invalid_response (a FAKE upstream sending garbage)', async () => {
      const problem = problemOf(await request(`${proxied.url}/v1/dns/resolve?name=example.com&type=A`), 'upstream_invalid_response');
      await expectDocumented(problem.type, 'upstream_invalid_response', proxied);
    });

    it('request_timeout (a header block never finished)', async () => {
      const answer = await raw(silentServer.port, 'GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const problem = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { code: string; type: string };
      expect(problem.code).toBe('request_timeout');
      await expectDocumented(problem.type, 'request_timeout', silentServer);
    });

    it('upstream_timeout (a FAKE upstream that never answers)', async () => {
      const problem = problemOf(await request(`${silentServer.url}/v1/dns/resolve?name=example.com&type=A`), 'upstream_timeout');
      await expectDocumented(problem.type, 'upstream_timeout', silentServer);
    });
  });

  describe.skipIf(!knotReady)('with Knot as the upstream', () => {
    let knot: Knot;
    let knotServer: TestServer;
    beforeAll(async () => {
      knot = await startKnot();
      knotServer = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}` });
    }, 30_000);
    afterAll(async () => {
      await knotServer.close();
      await knot.close();
    });

    it('upstream_response_too_large (51 answers)', async () => {
      const problem = problemOf(await request(`${knotServer.url}/v1/dns/resolve?name=fifty-one.example.test&type=A`), 'upstream_response_too_large');
      await expectDocumented(problem.type, 'upstream_response_too_large', knotServer);
    });
  });
});

describe.skipIf(!chromiumReady)('the page in Chromium', () => {
  it('renders with its stylesheet and nothing refused by the Content-Security-Policy', async () => {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    try {
      const page = await browser.newPage();
      await page.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { refused: string[] }).refused = seen;
        document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
      });
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      const response = await page.goto(`${server.url}/problems/payload_too_large`);
      expect(response?.status()).toBe(200);
      await page.waitForLoadState('load');
      expect(await page.textContent('h1')).toBe('Request body too large');
      expect(await page.title()).toBe('Request body too large (413): netdiag problem payload_too_large');
      // app.css sets the body's margin to 0 (a browser's own default is 8px): the stylesheet applied.
      expect(await page.evaluate(() => getComputedStyle(document.body).margin)).toBe('0px');
      expect(await page.evaluate(() => (window as unknown as { refused: string[] }).refused)).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
