// The operator's deployments (NETDIAG_SERVERS) on a real server, asked with curl: the list at
// /v1/servers as configured, cacheable and unlimited; the page's policy naming each listed origin
// (and no IPv6 literal, which a policy cannot name); the answers a page on another listed origin
// times carrying Timing-Allow-Origin. A bad list's refusals: src/runtime/node/adapter/config.test.ts
// and test/operators/start-up-refusals.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { curl } from '../support/curl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const available = requireCommands('the server list', ['curl'], 'curl');

const LISTED = [
  { name: 'fra', url: 'https://fra.netdiag.test', location: 'Frankfurt, DE', families: ['ipv4', 'ipv6'] },
  { name: 'sin', url: 'http://sin.netdiag.test:8080', location: 'Singapore', families: ['ipv4'] },
  { name: 'lab', url: 'http://[2001:db8::5]:8080', location: 'The lab', families: ['ipv6'] },
];

const dataOf = (res: { body: unknown }): unknown => (res.body as { data: unknown }).data;

describe.skipIf(!available)('/v1/servers and the page with a list of deployments', () => {
  let server: TestServer;
  beforeAll(async () => {
    // The families left out of one entry: the list says both.
    const configured = LISTED.map((s, i) => (i === 0 ? { name: s.name, url: `${s.url}/`, location: s.location } : s));
    server = await startTestServer({ NETDIAG_SERVERS: JSON.stringify(configured), NETDIAG_IPV4_URL: 'https://ipv4.netdiag.test' });
  });
  afterAll(() => server.close());

  it('lists each deployment as an origin, both families where none were named, cacheable and without a rate limit', async () => {
    const res = await curl(`${server.url}/v1/servers`);
    expectContract('GET', '/v1/servers', res);
    expect(dataOf(res)).toEqual({ servers: LISTED });
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });

  it("the page's connect-src names this origin, the family origin and each listed origin a policy can name, nothing else", async () => {
    const page = await curl(`${server.url}/`, ['-H', 'Accept: text/html']);
    expect(page.status).toBe(200);
    const connect = /connect-src ([^;]+);/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    expect(connect?.split(' ')).toEqual(["'self'", 'https://ipv4.netdiag.test', 'https://fra.netdiag.test', 'http://sin.netdiag.test:8080']);
  });

  it.each(['/nq/small', '/__down?bytes=0'])('%s carries Timing-Allow-Origin: * beside CORS, so a page on a listed origin may time it', async (path) => {
    const res = await curl(`${server.url}${path}`, ['-H', 'Origin: https://fra.netdiag.test']);
    expect(res.status).toBe(200);
    expect(res.headers.get('timing-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('the RPM upload and large download carry it too', async () => {
    const upload = await curl(`${server.url}/nq/upload`, ['-X', 'POST', '--data-binary', 'x'.repeat(100)]);
    expect([upload.status, upload.headers.get('timing-allow-origin')]).toEqual([200, '*']);
    // Node's fetch reads the headers and stops the endless body there.
    const large = await fetch(`${server.url}/nq/large`);
    await large.body?.cancel();
    expect([large.status, large.headers.get('timing-allow-origin')]).toEqual([200, '*']);
  });
});

describe.skipIf(!available)('/v1/servers unset', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('is an empty list, and the policy names this origin alone', async () => {
    const res = await curl(`${server.url}/v1/servers`);
    expectContract('GET', '/v1/servers', res);
    expect(dataOf(res)).toEqual({ servers: [] });
    const page = await curl(`${server.url}/`, ['-H', 'Accept: text/html']);
    expect(/connect-src ([^;]+);/.exec(page.headers.get('content-security-policy') ?? '')?.[1]).toBe("'self'");
  });
});
