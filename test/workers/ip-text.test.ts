// The text answers for curl, /json (echoip's form), GET / with Accept JSON, ?ip= and /port/N
// (neither served here, each saying why), /v1/ip/families and the page's family origins, and the server list on
// Workers, where the edge's request.cf is the caller's place. Every answer is checked against the
// OpenAPI document.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { FULL_CF, workerWith } from './worker.js';

/** Each text path and the line FULL_CF (the platform's observation) makes of it. */
const EXPECTED: readonly [path: string, line: string][] = [
  ['/ip', '203.0.113.20'],
  ['/country', 'Netherlands'],
  ['/country-iso', 'NL'],
  ['/city', 'Amsterdam'],
  ['/region', 'North Holland'],
  ['/asn', 'AS64500'],
  ['/asn-org', 'Example Networks'],
  ['/coordinates', '52.374,4.8897'],
  ['/timezone', 'Europe/Amsterdam'],
];

describe('text answers for curl in workerd', () => {
  const worker = workerWith();

  it('every text path answers its line from request.cf, no-store, with the ip limit and Vary: Accept', async () => {
    for (const [path, line] of EXPECTED) {
      const res = await worker.send(path, { caller: '203.0.113.20', cf: FULL_CF });
      expectContract('GET', path, res);
      expect([path, res.status, res.text]).toEqual([path, 200, `${line}\n`]);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('ratelimit-limit')).toBe('120');
      expect(res.headers.get('vary')).toBe('Accept');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  it('a field the edge did not send is an empty line for curl, as echoip answers, a problem document for JSON', async () => {
    const text = await worker.send('/city', { caller: '2001:db8::20', cf: { colo: 'AMS' } });
    expectContract('GET', '/city', text);
    expect([text.status, text.text]).toEqual([200, '\n']);
    const json = await worker.send('/city', { caller: '2001:db8::20', cf: { colo: 'AMS' }, headers: { Accept: 'application/json' } });
    expectContract('GET', '/city', json);
    expect(json.body).toMatchObject({ status: 404, code: 'not_found' });
    // No PTR for a documentation address through the suite's resolver (or none reachable).
    const hostname = await worker.send('/hostname', { caller: '2001:db8::20' });
    expectContract('GET', '/hostname', hostname);
    expect([hostname.status, hostname.text]).toEqual([200, '\n']);
  });

  it("/json and GET / with Accept: application/json are echoip's object, from what the edge observed", async () => {
    const json = await worker.send('/json', { caller: '203.0.113.21', cf: FULL_CF });
    expectContract('GET', '/json', json);
    // echoip's names for the edge's observation (FULL_CF): written out, not taken from /v1/ip.
    expect(json.body).toMatchObject({
      ip: '203.0.113.21',
      ip_decimal: 3405803797,
      country: 'Netherlands',
      country_iso: 'NL',
      country_eu: true,
      region_name: 'North Holland',
      city: 'Amsterdam',
      latitude: 52.374,
      longitude: 4.8897,
      time_zone: 'Europe/Amsterdam',
      asn: 'AS64500',
      asn_org: 'Example Networks',
      user_agent: null,
    });
    const root = await worker.send('/', { caller: '203.0.113.21', cf: FULL_CF, headers: { Accept: 'application/json' } });
    expectContract('GET', '/', root);
    expect(root.body).toEqual(json.body);
  });

  it('?ip= is refused with why: Workers hold no data to look another address up in', async () => {
    for (const path of ['/json?ip=8.8.8.8', '/country?ip=8.8.8.8']) {
      const res = await worker.send(path, { caller: '203.0.113.24', cf: FULL_CF, headers: { Accept: 'application/json' } });
      expectContract('GET', path.slice(0, path.indexOf('?')), res);
      expect([path, res.status]).toEqual([path, 404]);
      expect((res.body as { detail: string }).detail).toMatch(/cannot look up another address: it runs on Cloudflare Workers/);
    }
    // A malformed one is still named as such first.
    const bad = await worker.send('/json?ip=nope', { caller: '203.0.113.24', cf: FULL_CF });
    expect(bad.status).toBe(400);
  });

  it('/port/N is not served on Workers: 404 saying so, even for a well-formed port', async () => {
    const res = await worker.send('/port/22', { caller: '203.0.113.25', cf: FULL_CF });
    expectContract('GET', '/port/{port}', res);
    expect(res.status).toBe(404);
    expect((res.body as { detail: string }).detail).toMatch(/^The port check is not served on Cloudflare Workers/);
  });

  it('HEAD answers with the GET headers and no body', async () => {
    const res = await worker.send('/asn', { method: 'HEAD', caller: '203.0.113.22', cf: FULL_CF });
    expect([res.status, res.text, res.headers.get('content-length')]).toEqual([200, '', String('AS64500\n'.length)]);
  });

  it('without CF-Connecting-IP: a 503 line for curl', async () => {
    const res = await worker.send('/ip');
    expectContract('GET', '/ip', res);
    expect(res.status).toBe(503);
    expect(res.text).toMatch(/^Connection unavailable: The caller's address cannot be established: .+\.\n$/i);
  });
});

describe('family origins in workerd', () => {
  it('/v1/ip/families is null for both without the vars', async () => {
    const res = await workerWith().send('/v1/ip/families');
    expectContract('GET', '/v1/ip/families', res);
    expect((res.body as { data: unknown }).data).toEqual({ ipv4_url: null, ipv6_url: null });
  });

  it('with both vars: advertised, in the page as attributes, and named by its connect-src and nothing else', async () => {
    const worker = workerWith({ NETDIAG_IPV4_URL: 'https://ipv4.netdiag.test', NETDIAG_IPV6_URL: 'https://ipv6.netdiag.test' });
    const res = await worker.send('/v1/ip/families');
    expectContract('GET', '/v1/ip/families', res);
    expect((res.body as { data: unknown }).data).toEqual({ ipv4_url: 'https://ipv4.netdiag.test', ipv6_url: 'https://ipv6.netdiag.test' });
    const page = await worker.send('/', { caller: '203.0.113.23', headers: { Accept: 'text/html' } });
    expectContract('GET', '/', page);
    expect(page.text).toContain('data-ipv4-url="https://ipv4.netdiag.test" data-ipv6-url="https://ipv6.netdiag.test"');
    const connect = /connect-src ([^;]+);/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    expect(connect).toBe("'self' https://ipv4.netdiag.test https://ipv6.netdiag.test");
  });
});

describe('the server list in workerd', () => {
  it('/v1/servers is the configured list, and the page\'s connect-src names each listed origin', async () => {
    const listed = [
      { name: 'fra', url: 'https://fra.netdiag.test', location: 'Frankfurt, DE', families: ['ipv4', 'ipv6'] },
      { name: 'sin', url: 'https://sin.netdiag.test', location: 'Singapore', families: ['ipv4'] },
    ];
    const worker = workerWith({ NETDIAG_SERVERS: JSON.stringify(listed) });
    const res = await worker.send('/v1/servers');
    expectContract('GET', '/v1/servers', res);
    expect((res.body as { data: unknown }).data).toEqual({ servers: listed });
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const page = await worker.send('/', { caller: '203.0.113.23', headers: { Accept: 'text/html' } });
    const connect = /connect-src ([^;]+);/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    expect(connect).toBe("'self' https://fra.netdiag.test https://sin.netdiag.test");
  });

  it('/v1/servers is an empty list without the var', async () => {
    const res = await workerWith().send('/v1/servers');
    expectContract('GET', '/v1/servers', res);
    expect((res.body as { data: unknown }).data).toEqual({ servers: [] });
  });
});
