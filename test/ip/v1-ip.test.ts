// GET /v1/ip over real sockets: caller address rules, embedded geo data, PTR through Knot,
// HTTPS with HTTP/2 and TLS 1.3, the MaxMind database path.
import { maxmindFixtures } from '../support/maxmind.js';
import { connect as connectHttp2 } from 'node:http2';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { expectContract } from '../support/contract.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { send, type Reply } from '../support/http.js';
import { startKnot, type Knot } from '../support/knot.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

// The response data as the contract (openapi/openapi.yaml) defines it: a field changed there fails here.
type IpData = Schemas['CallerIpData'];

const data = (res: Reply) => (res.body as { data: IpData }).data;
const ALL_NULL_LOCATION = {
  city: null, region: null, country: null, country_code: null, postal_code: null, timezone: null, latitude: null, longitude: null,
};

describe('GET /v1/ip', () => {
  let plain: TestServer;
  let proxied: TestServer;
  beforeAll(async () => {
    plain = await startTestServer({ NETDIAG_COLO: 'AMS' });
    proxied = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback, 10.0.0.0/8' });
  });
  afterAll(async () => {
    await plain.close();
    await proxied.close();
  });

  it('describes a loopback caller with nulls for network and location, never cached', async () => {
    const res = await send(`${plain.url}/v1/ip`, { localAddress: '127.0.0.3' });
    expect(res.status).toBe(200);
    expectContract('GET', '/v1/ip', res);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(data(res)).toEqual({
      address: '127.0.0.3',
      ip_version: 'ipv4',
      reverse_hostname: null,
      network: { asn: null, organization: null },
      location: ALL_NULL_LOCATION,
      connection: { provider_colo: 'AMS', http_protocol: 'HTTP/1.1', tls_version: null },
      data_provenance: 'observed_connection',
    });
  });

  it('ignores query parameters and forwarding headers from an untrusted peer', async () => {
    const res = await send(`${plain.url}/v1/ip?address=8.8.8.8&ip=8.8.8.8`, {
      headers: { 'X-Forwarded-For': '8.8.8.8', Forwarded: 'for=1.1.1.1' },
    });
    expect(data(res).address).toBe('127.0.0.1');
    expect(data(res).network.asn).toBeNull();
  });

  it('takes the nearest untrusted hop from a trusted proxy, with real embedded data', async () => {
    const google = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.8.8' } });
    expectContract('GET', '/v1/ip', google);
    expect(data(google)).toMatchObject({ address: '8.8.8.8', ip_version: 'ipv4', network: { asn: 15169 } });
    expect(data(google).location.country_code).toBe('US');
    expect(data(google).location.country).toBe('United States');
    // DB-IP Lite has no zone: it is filled in from the record's coordinates (Mountain View).
    expect(data(google).location.timezone).toBe('America/Los_Angeles');
    expect(data(google).location.postal_code).toBeNull();
    const cloudflare = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': '1.1.1.1' } });
    expect(data(cloudflare).network.asn).toBe(13335);
    expect(data(cloudflare).network.organization).toMatch(/cloudflare/i);
    expect(data(cloudflare).location.latitude).toEqual(expect.any(Number));
  });

  it('is not fooled by a spoofed chain: the client-written entries left of the proxy are ignored', async () => {
    const res = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': '1.1.1.1, 8.8.8.8, 10.1.2.3' } });
    expect(data(res).address).toBe('8.8.8.8');
  });

  it('reads RFC 7239 Forwarded with IPv6 when that is the trusted header, and reports mapped addresses as IPv4', async () => {
    const forwarded = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_TRUST_PROXY_HEADER: 'forwarded' });
    try {
      const v6 = await send(`${forwarded.url}/v1/ip`, { headers: { Forwarded: 'for="[2001:4860:4860::8888]:443";proto=https' } });
      expect(data(v6)).toMatchObject({ address: '2001:4860:4860::8888', ip_version: 'ipv6', network: { asn: 15169 } });
    } finally {
      await forwarded.close();
    }
    const mapped = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': '::ffff:8.8.8.8' } });
    expect(data(mapped)).toMatchObject({ address: '8.8.8.8', ip_version: 'ipv4' });
  });

  it('behind a trusted X-Forwarded-For proxy, a client-sent Forwarded (or X-Real-IP) cannot choose the address', async () => {
    // The proxy appended the real client to X-Forwarded-For and passed the client's own
    // Forwarded and X-Real-IP through, as nginx, HAProxy and AWS ALB do.
    const spoofed = await send(`${proxied.url}/v1/ip`, {
      headers: { Forwarded: 'for=203.0.113.99', 'X-Real-IP': '203.0.113.98', 'X-Forwarded-For': '198.51.100.7' },
    });
    expect(data(spoofed).address).toBe('198.51.100.7');
    // Rotating the spoofed header does not give a fresh rate-limit window either.
    const limited = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=2' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await send(`${limited.url}/v1/ip`, { headers: { Forwarded: `for=203.0.113.${String(i + 1)}`, 'X-Forwarded-For': '198.51.100.8' } });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 429, 429]);
    } finally {
      await limited.close();
    }
  });

  it('with NETDIAG_TRUST_PROXY_HEADER=x-real-ip, reads only that single address', async () => {
    const realIp = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_TRUST_PROXY_HEADER: 'X-Real-IP' });
    try {
      const res = await send(`${realIp.url}/v1/ip`, { headers: { 'X-Real-IP': '8.8.8.8', 'X-Forwarded-For': '1.1.1.1' } });
      expect(data(res).address).toBe('8.8.8.8');
    } finally {
      await realIp.close();
    }
  });

  it.each(['192.0.2.7', '198.51.100.1', '10.9.9.9', '100.64.1.1', '169.254.0.5', '2001:db8::1', 'fe80::1', 'fc00::5'])(
    'special-use %s gets null network and location',
    async (address) => {
      const res = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': address } });
      expect(res.status).toBe(200);
      expect(data(res).network).toEqual({ asn: null, organization: null });
      expect(data(res).location).toEqual(ALL_NULL_LOCATION);
    },
  );

  it('answers 503 connection_unavailable when a trusted proxy sends no usable header', async () => {
    const none = await send(`${proxied.url}/v1/ip`);
    expect(none.status).toBe(503);
    expect((none.body as { code: string }).code).toBe('connection_unavailable');
    expectContract('GET', '/v1/ip', none);
    const garbage = await send(`${proxied.url}/v1/ip`, { headers: { 'X-Forwarded-For': 'not-an-address' } });
    expect(garbage.status).toBe(503);
  });
});

const haveKnot = requireCommands('/v1/ip PTR suite', ['knotd', 'knotc', 'openssl'], 'knot openssl');

describe.skipIf(!haveKnot)('GET /v1/ip reverse hostname and TLS', () => {
  let knot: Knot;
  let server: TestServer;
  let tlsServer: TestServer;
  const cert = haveKnot ? selfSignedCertificate() : { certFile: '', keyFile: '' };
  beforeAll(async () => {
    knot = await startKnot();
    const upstream = `udp://127.0.0.1:${knot.port}`;
    server = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_DNS_UPSTREAM: upstream });
    tlsServer = await startTestServer({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile, NETDIAG_DNS_UPSTREAM: upstream });
  });
  afterAll(async () => {
    await server.close();
    await tlsServer.close();
    await knot.close();
  });

  it('looks up the caller PTR through the fixed resolver, lower case without the dot, never cached', async () => {
    const before = knot.queries();
    const first = await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.8.8' } });
    expect(data(first).reverse_hostname).toBe('dns.google');
    await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.8.8' } });
    expect(knot.queries() - before).toBe(2);
  });

  it('is null when the PTR does not exist', async () => {
    const before = knot.queries();
    const missing = await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '8.8.4.4' } });
    expect(data(missing).reverse_hostname).toBeNull();
    expect(knot.queries() - before).toBe(1);
  });

  it('asks the PTR of special-use callers too, from the operator\'s resolver (docs/api.md, "/v1/ip")', async () => {
    // 192.0.2.0/24 is documentation space; Knot serves its reverse zone as a private network's
    // resolver serves its own.
    const before = knot.queries();
    const res = await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '192.0.2.10' } });
    expect(data(res).reverse_hostname).toBe('www.example.test');
    expect(data(res).network).toEqual({ asn: null, organization: null });
    expect(data(res).location).toEqual(ALL_NULL_LOCATION);
    expect(knot.queries() - before).toBe(1);
  });

  it('observes HTTP/2 and TLS 1.3 when it terminates TLS itself', async () => {
    const port = tlsServer.port;
    const session = connectHttp2(`https://127.0.0.1:${port}`, { ca: readFileSync(cert.certFile), maxVersion: 'TLSv1.3' });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ':path': '/v1/ip' });
        let text = '';
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => { resolve(text); });
        stream.on('error', reject);
      });
      const parsed = JSON.parse(body) as { data: IpData };
      expect(parsed.data.connection).toEqual({ provider_colo: null, http_protocol: 'HTTP/2', tls_version: 'TLSv1.3' });
    } finally {
      session.close();
    }
  });

  it('still speaks HTTP/1.1 over TLS (ALPN) and reports TLS 1.2 when that is negotiated', async () => {
    const { request } = await import('node:https');
    const body = await new Promise<string>((resolve, reject) => {
      const req = request(
        `https://127.0.0.1:${tlsServer.port}/v1/ip`,
        { ca: readFileSync(cert.certFile), maxVersion: 'TLSv1.2' },
        (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => { resolve(text); });
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect((JSON.parse(body) as { data: IpData }).data.connection).toEqual({ provider_colo: null, http_protocol: 'HTTP/1.1', tls_version: 'TLSv1.2' });
  });
});

const FIXTURES = maxmindFixtures('MaxMind database suite') ?? '';
const haveFixtures = FIXTURES !== '';

describe.skipIf(!haveFixtures)('MaxMind-format databases (NETDIAG_GEOIP_CITY, NETDIAG_GEOIP_ASN)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_GEOIP_CITY: `${FIXTURES}GeoIP2-City-Test.mmdb`,
      NETDIAG_GEOIP_ASN: `${FIXTURES}GeoLite2-ASN-Test.mmdb`,
    });
  });
  afterAll(() => server.close());

  it('uses the operator files instead of the embedded data', async () => {
    const asn = await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '1.0.0.1' } });
    expect(data(asn).network.asn).toBe(15169);
    const city = await send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': '2001:218::1' } });
    expectContract('GET', '/v1/ip', city);
    // The test database's own source lists this range; compare with it rather than with our code.
    const source = JSON.parse(readFileSync(`${FIXTURES}GeoIP2-City-Test.json`, 'utf8')) as Record<string, { country?: { iso_code?: string } }>[];
    const record = source.find((entry) => Object.keys(entry)[0] === '2001:218::/32');
    const expected = record?.['2001:218::/32']?.country?.iso_code ?? null;
    expect(expected).not.toBeNull();
    expect(data(city).location.country_code).toBe(expected);
  });

  it.each(['GeoIP2-City-Test-Broken-Double-Format.mmdb', 'GeoIP2-City-Test-Invalid-Node-Count.mmdb'])(
    'a corrupt %s never turns a request into a 500',
    async (file) => {
      const broken = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_GEOIP_CITY: `${FIXTURES}${file}` }).catch(
        (err: unknown) => err as Error,
      );
      // The reader may refuse the file at start-up (naming the variable) or open it lazily.
      if (broken instanceof Error) {
        expect(broken.message).toMatch(/not a valid MaxMind database/);
        return;
      }
      try {
        for (const address of ['2001:218::1', '81.2.69.160', '8.8.8.8', '2a02:cf40::1']) {
          const res = await send(`${broken.url}/v1/ip`, { headers: { 'X-Forwarded-For': address } });
          expect(res.status, address).toBe(200);
          expectContract('GET', '/v1/ip', res);
        }
      } finally {
        await broken.close();
      }
    },
  );

  it('a file that is not a database stops start-up naming the variable', async () => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_GEOIP_ASN: `${FIXTURES}README.md` });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^netdiag: invalid NETDIAG_GEOIP_ASN: /);
  });

  it('a City file given as the ASN database stops start-up naming the variable', async () => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_GEOIP_ASN: `${FIXTURES}GeoIP2-City-Test.mmdb` });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^netdiag: invalid NETDIAG_GEOIP_ASN: .*not an ASN database/);
  });
});
