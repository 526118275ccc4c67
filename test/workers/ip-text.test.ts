// The text answers for curl, /json, GET / with Accept JSON, /v1/ip/families and the page's
// family origins on Workers, where the edge's request.cf is the caller's place. Every answer is
// checked against the OpenAPI document.
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

  it('a field the edge did not send is a 404 line for curl, a problem document for JSON', async () => {
    const text = await worker.send('/city', { caller: '2001:db8::20', cf: { colo: 'AMS' } });
    expectContract('GET', '/city', text);
    expect([text.status, text.text]).toEqual([404, 'Not found: No city is known for 2001:db8::20.\n']);
    const json = await worker.send('/city', { caller: '2001:db8::20', cf: { colo: 'AMS' }, headers: { Accept: 'application/json' } });
    expectContract('GET', '/city', json);
    expect(json.body).toMatchObject({ status: 404, code: 'not_found' });
    // No PTR for a documentation address through the suite's resolver (or none reachable): 404.
    const hostname = await worker.send('/hostname', { caller: '2001:db8::20' });
    expectContract('GET', '/hostname', hostname);
    expect(hostname.status).toBe(404);
  });

  it('/json and GET / with Accept: application/json are the /v1/ip data without the envelope', async () => {
    const whole = await worker.send('/v1/ip', { caller: '203.0.113.21', cf: FULL_CF });
    const json = await worker.send('/json', { caller: '203.0.113.21', cf: FULL_CF });
    expectContract('GET', '/json', json);
    expect(json.body).toEqual((whole.body as { data: unknown }).data);
    const root = await worker.send('/', { caller: '203.0.113.21', cf: FULL_CF, headers: { Accept: 'application/json' } });
    expectContract('GET', '/', root);
    expect(root.body).toEqual(json.body);
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
