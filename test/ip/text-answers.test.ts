// The text answers for curl (/ip, /country, … /hostname), /json (echoip's object: its own
// suite is ip/echoip.test.ts), GET / with Accept JSON and /v1/ip/families, asked by curl over IPv4 (-4, 127.0.0.1) and IPv6 (-6, ::1) of one server
// listening on both, with PTR answered by Knot. Every answer is checked against the OpenAPI document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { expectContract } from '../support/contract.js';
import { curl, type CurlReply } from '../support/curl.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

type IpData = Schemas['CallerIpData'];

const available = requireCommands('text answers for curl', ['curl', 'knotd', 'knotc'], 'curl knot');

/** Each text path and how its line is read off the /v1/ip object (the contract's field, not our code). */
const FIELDS: readonly [path: string, field: (d: IpData) => string | null][] = [
  ['/ip', (d) => d.address],
  ['/country', (d) => d.location.country],
  ['/country-iso', (d) => d.location.country_code],
  ['/city', (d) => d.location.city],
  ['/region', (d) => d.location.region],
  ['/asn', (d) => (d.network.asn === null ? null : `AS${String(d.network.asn)}`)],
  ['/asn-org', (d) => d.network.organization],
  ['/coordinates', (d) => (d.location.latitude === null ? null : `${String(d.location.latitude)},${String(d.location.longitude)}`)],
  ['/timezone', (d) => d.location.timezone],
  ['/hostname', (d) => d.reverse_hostname],
];

/** The two families as curl reaches one dual-stack server: flag, host, and the caller's address. */
const FAMILIES = [
  { flag: '-4', host: '127.0.0.1', caller: '127.0.0.1', ptr: 'v4.loopback.example.test' },
  { flag: '-6', host: '[::1]', caller: '::1', ptr: 'v6.loopback.example.test' },
] as const;

const envelopeData = (res: CurlReply) => (res.body as { data: IpData }).data;

describe.skipIf(!available)('text answers for curl over both address families', () => {
  let knot: Knot;
  let direct: TestServer;
  let proxied: TestServer;
  let limited: TestServer;
  const at = (server: TestServer, host: string, path: string) => `http://${host}:${String(server.port)}${path}`;

  beforeAll(async () => {
    knot = await startKnot();
    // HOST=:: listens on both families; 127.0.0.1 arrives as ::ffff:127.0.0.1 and is reported as IPv4.
    const common = { HOST: '::', NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'ip=1000' };
    direct = await startTestServer(common);
    proxied = await startTestServer({ ...common, NETDIAG_TRUST_PROXY: 'loopback' });
    limited = await startTestServer({ ...common, NETDIAG_RATE_LIMITS: 'ip=3' });
  });
  afterAll(async () => {
    await Promise.all([direct.close(), proxied.close(), limited.close()]);
    await knot.close();
  });

  describe.each(FAMILIES)('curl $flag', ({ flag, host, caller, ptr }) => {
    it('/ip is the address of the family curl came over, one line, no-store, with CORS and the ip limit', async () => {
      const res = await curl(at(direct, host, '/ip'), [flag]);
      expect(res.status).toBe(200);
      expectContract('GET', '/ip', res);
      expect(res.text).toBe(`${caller}\n`);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('ratelimit-limit')).toBe('1000');
    });

    it('every text path answers the field /v1/ip has for the caller, or, as echoip does, an empty line where it has none', async () => {
      const whole = envelopeData(await curl(at(direct, host, '/v1/ip'), [flag]));
      expect(whole.address).toBe(caller);
      expect(whole.reverse_hostname).toBe(ptr);
      for (const [path, field] of FIELDS) {
        const res = await curl(at(direct, host, path), [flag]);
        expectContract('GET', path, res);
        const value = field(whole);
        if (value === null) {
          // A loopback caller has no location or network: special-use addresses are not looked up.
          // A script's $(curl -s host/city) is then empty, not an error sentence.
          expect([path, res.status, res.text]).toEqual([path, 200, '\n']);
          expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
          expect(res.headers.get('vary')).toBe('Accept');
        } else {
          expect(res.status, path).toBe(200);
          expect(res.text, path).toBe(`${value}\n`);
        }
      }
    });

    it('through a trusted proxy, every field has its value for a public caller', async () => {
      const forwarded = flag === '-4' ? '8.8.8.8' : '2001:4860:4860::8888';
      const header = ['-H', `X-Forwarded-For: ${forwarded}`];
      const whole = envelopeData(await curl(at(proxied, host, '/v1/ip'), [flag, ...header]));
      expect(whole).toMatchObject({ address: forwarded, network: { asn: 15169 } });
      expect(whole.location.country_code).toMatch(/^[A-Z]{2}$/);
      for (const [path, field] of FIELDS) {
        const res = await curl(at(proxied, host, path), [flag, ...header]);
        expectContract('GET', path, res);
        const value = field(whole);
        // 8.8.8.8 has a PTR in Knot (dns.google); 2001:4860:4860::8888 has none there: an empty line.
        if (value === null) expect([path, res.status, res.text]).toEqual(['/hostname', 200, '\n']);
        else expect([path, res.status, res.text]).toEqual([path, 200, `${value}\n`]);
      }
      expect((await curl(at(proxied, host, '/asn'), [flag, ...header])).text).toBe('AS15169\n');
    });

    it('HEAD answers every path with the GET headers and no body', async () => {
      for (const [path] of FIELDS) {
        const get = await curl(at(direct, host, path), [flag]);
        const head = await curl(at(direct, host, path), [flag, '-I']);
        expect([path, head.status, head.text]).toEqual([path, get.status, '']);
        expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
        expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      }
    });

    it("GET / answers the address for curl, echoip's object for Accept: application/json", async () => {
      const text = await curl(at(direct, host, '/'), [flag]);
      expectContract('GET', '/', text);
      expect(text.text).toBe(`${caller}\n`);
      const json = await curl(at(direct, host, '/'), [flag, '-H', 'Accept: application/json']);
      expectContract('GET', '/', json);
      expect(json.headers.get('content-type')).toBe('application/json');
      expect(json.headers.get('vary')).toBe('Accept');
      expect(json.body).toMatchObject({ ip: caller, hostname: ptr, country: null, asn: null });
    });
  });

  it('a client that asks for JSON gets a problem document saying what is missing and why, where curl gets an empty line', async () => {
    const res = await curl(at(direct, '127.0.0.1', '/city'), ['-H', 'Accept: application/json']);
    expect(res.status).toBe(404);
    expectContract('GET', '/city', res);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.body).toMatchObject({ code: 'not_found', status: 404, detail: 'No city is known for 127.0.0.1: it is a loopback address, with no location or network on the internet.' });
  });

  it('the text paths share the ip limit with /v1/ip; past it curl reads a 429 line with Retry-After', async () => {
    const url = (path: string) => at(limited, '[::1]', path);
    expect((await curl(url('/v1/ip'), ['-6'])).status).toBe(200);
    expect((await curl(url('/ip'), ['-6'])).status).toBe(200);
    expect((await curl(url('/hostname'), ['-6'])).status).toBe(200);
    const over = await curl(url('/country'), ['-6']);
    expect(over.status).toBe(429);
    expectContract('GET', '/country', over);
    expect(over.text).toMatch(/^Rate limit exceeded: More than 3 ip requests from this source in one minute; retry after [0-9]+ s\.\n$/);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    const json = await curl(url('/json'), ['-6']);
    expect(json.status).toBe(429);
    expect(json.headers.get('content-type')).toBe('application/problem+json');
  });

  it('OPTIONS is a CORS preflight on every text path', async () => {
    for (const [path] of FIELDS) {
      const res = await curl(at(direct, '127.0.0.1', path), ['-X', 'OPTIONS', '-H', 'Origin: https://example.org', '-H', 'Access-Control-Request-Method: GET']);
      expect([path, res.status]).toEqual([path, 204]);
      expectContract('OPTIONS', path, res);
    }
  });

  it('/v1/ip/families says null for both when the operator set neither', async () => {
    const res = await curl(at(direct, '127.0.0.1', '/v1/ip/families'));
    expect(res.status).toBe(200);
    expectContract('GET', '/v1/ip/families', res);
    expect(envelopeData(res) as unknown).toEqual({ ipv4_url: null, ipv6_url: null });
  });
});

describe.skipIf(!available)('/v1/ip/families with both origins set', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ HOST: '::', NETDIAG_IPV4_URL: 'http://127.0.0.1:8080/', NETDIAG_IPV6_URL: 'http://[::1]:8080' });
  });
  afterAll(() => server.close());

  it('advertises each origin as configured, cacheable, without a rate limit', async () => {
    const res = await curl(`${server.url}/v1/ip/families`);
    expectContract('GET', '/v1/ip/families', res);
    expect(envelopeData(res) as unknown).toEqual({ ipv4_url: 'http://127.0.0.1:8080', ipv6_url: 'http://[::1]:8080' });
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  });
});
