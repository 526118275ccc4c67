// A drop-in for ifconfig.co scripts: /json (and / asked for JSON) read by a small client of
// echoip's own JSON form, for an IPv4 and an IPv6 caller behind a trusted proxy and for `?ip=`
// lookups; `?ip=` on the text paths, its refusals, its limit and its privacy. A real server, curl
// and Knot for the reverse names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { expectContract } from '../support/contract.js';
import { curl } from '../support/curl.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

type IpData = Schemas['CallerIpData'];

const available = requireCommands('echoip-compatible answers', ['curl', 'knotd', 'knotc', 'jq'], 'curl knot jq');

/**
 * echoip's answer as its source declares it (http/http.go, iputil/paser/parser.go: the Response
 * struct), each field's JSON name and Go type, written down here rather than taken from netdiag:
 * net.IP and string are JSON strings, *big.Int an integer of any size, *bool a boolean, uint and
 * float64 numbers, *useragent.UserAgent an object. Every field but ip and ip_decimal is
 * `omitempty`, so a client must take a field that is absent; Go's decoder also takes null for any
 * of them (the zero value), which is what netdiag sends where it has no value.
 */
const ECHOIP_FIELDS = {
  ip: 'string',
  ip_decimal: 'bigint',
  country: 'string',
  country_iso: 'string',
  country_eu: 'boolean',
  region_name: 'string',
  region_code: 'string',
  metro_code: 'uint',
  zip_code: 'string',
  city: 'string',
  latitude: 'number',
  longitude: 'number',
  time_zone: 'string',
  asn: 'string',
  asn_org: 'string',
  hostname: 'string',
  user_agent: 'object',
} as const;

type EchoipValue = string | bigint | boolean | number | object | null;

/**
 * The client: decodes a /json answer as Go's encoding/json would into echoip's struct, failing
 * where it would (a field of another type), and keeps ip_decimal's digits whole (a big.Int).
 * Fields it does not know are ignored, as Go ignores them.
 */
function readEchoip(text: string): Record<keyof typeof ECHOIP_FIELDS, EchoipValue | undefined> {
  const body = JSON.parse(text) as Record<string, unknown>;
  const digits = /"ip_decimal":\s*([0-9]+)[,\s}]/.exec(text)?.[1];
  const out = {} as Record<keyof typeof ECHOIP_FIELDS, EchoipValue | undefined>;
  for (const [name, type] of Object.entries(ECHOIP_FIELDS) as [keyof typeof ECHOIP_FIELDS, string][]) {
    const value = body[name];
    if (value === undefined || value === null) {
      out[name] = value;
      continue;
    }
    const fits =
      type === 'bigint' ? typeof value === 'number' && digits !== undefined : type === 'uint' ? typeof value === 'number' && Number.isInteger(value) && value >= 0 : type === 'object' ? typeof value === 'object' : typeof value === type;
    if (!fits) throw new Error(`json: cannot unmarshal ${typeof value} into Go struct field Response.${name} of type ${type}`);
    out[name] = type === 'bigint' ? BigInt(digits ?? '') : (value);
  }
  if (typeof out.ip !== 'string' || typeof out.ip_decimal !== 'bigint') throw new Error('echoip always sends ip and ip_decimal');
  return out;
}

/** What echoip would say of an address, from the /v1/ip object: the mapping of its field names onto the contract's. */
function expectedOf(data: IpData) {
  return {
    ip: data.address,
    country: data.location.country,
    country_iso: data.location.country_code,
    region_name: data.location.region,
    zip_code: data.location.postal_code,
    city: data.location.city,
    latitude: data.location.latitude,
    longitude: data.location.longitude,
    time_zone: data.location.timezone,
    asn: data.network.asn === null ? null : `AS${String(data.network.asn)}`,
    asn_org: data.network.organization,
    hostname: data.reverse_hostname,
  };
}

// The addresses as integers, computed outside this project (Python's ipaddress).
const CALLERS = [
  { address: '8.8.8.8', decimal: 134744072n, hostname: 'dns.google', eu: false },
  { address: '2001:4860:4860::8888', decimal: 42541956123769884636017138956568135816n, hostname: null, eu: false },
  // An EU country's address (DB-IP places 2a00:1450:4001:80b::200e in Germany).
  { address: '2a00:1450:4001:80b::200e', decimal: 55827987829219828372747129755843698702n, hostname: null, eu: true },
] as const;

describe.skipIf(!available)("echoip's JSON form and ?ip=", () => {
  let knot: Knot;
  let proxied: TestServer;
  let limited: TestServer;
  const at = (server: TestServer, path: string) => `http://127.0.0.1:${String(server.port)}${path}`;
  const from = (caller: string) => ['-H', `X-Forwarded-For: ${caller}`];
  const v1 = async (server: TestServer, caller: string) => ((await curl(at(server, '/v1/ip'), from(caller))).body as { data: IpData }).data;

  beforeAll(async () => {
    knot = await startKnot();
    const common = { NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_ACCESS_LOG: 'on', NETDIAG_LOG_LEVEL: 'info' };
    proxied = await startTestServer({ ...common, NETDIAG_RATE_LIMITS: 'ip=1000' });
    limited = await startTestServer({ ...common, NETDIAG_RATE_LIMITS: 'ip=3' });
  });
  afterAll(async () => {
    await Promise.all([proxied.close(), limited.close()]);
    await knot.close();
  });

  describe.each(CALLERS)('a caller at $address behind the trusted proxy', ({ address, decimal, hostname, eu }) => {
    it("reads /json with echoip's client: every field of echoip's form, of echoip's type, with the values /v1/ip has", async () => {
      const res = await curl(at(proxied, '/json'), [...from(address), '-A', 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0']);
      expect(res.status).toBe(200);
      expectContract('GET', '/json', res);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('cache-control')).toBe('no-store');
      const read = readEchoip(res.text);
      // Every field is there: null where netdiag has no value, never left out.
      expect(Object.keys(res.body as object)).toEqual(Object.keys(ECHOIP_FIELDS));
      const data = await v1(proxied, address);
      expect(data.location.country_code).toMatch(/^[A-Z]{2}$/);
      expect(read).toMatchObject(expectedOf(data));
      expect(read).toMatchObject({ ip: address, ip_decimal: decimal, hostname, country_eu: eu, asn: 'AS15169', region_code: null, metro_code: null });
      expect(typeof read.latitude).toBe('number');
      // The User-Agent is never sent back, though echoip parses it into this field.
      expect(read.user_agent).toBeNull();
      expect(res.text).not.toContain('Firefox');
    });

    it('jq reads the fields a script reads: .ip, .country_iso, .asn', async () => {
      const res = await curl(at(proxied, '/json'), from(address));
      const { execFileSync } = await import('node:child_process');
      const jq = (filter: string) => execFileSync('jq', ['-r', filter], { input: res.text }).toString();
      expect(jq('.ip')).toBe(`${address}\n`);
      expect(jq('.country_iso')).toBe(`${String((await v1(proxied, address)).location.country_code)}\n`);
      expect(jq('.asn')).toBe('AS15169\n');
    });

    it('answers the same of that address to another caller who names it with ?ip=, and GET / with Accept JSON does too', async () => {
      const own = readEchoip((await curl(at(proxied, '/json'), from(address))).text);
      const lookup = await curl(at(proxied, `/json?ip=${encodeURIComponent(address)}`), from('9.9.9.9'));
      expectContract('GET', '/json', lookup);
      expect(readEchoip(lookup.text)).toEqual(own);
      const root = await curl(at(proxied, `/?ip=${encodeURIComponent(address)}`), [...from('9.9.9.9'), '-H', 'Accept: application/json']);
      expectContract('GET', '/', root);
      expect(readEchoip(root.text)).toEqual(own);
    });
  });

  it('?ip= on the text paths answers for that address: its own line, country, network and reverse name', async () => {
    const data = await v1(proxied, '8.8.8.8');
    const ask = async (path: string) => {
      const res = await curl(at(proxied, path), from('9.9.9.9'));
      expectContract('GET', path.slice(0, path.indexOf('?')), res);
      return [res.status, res.text];
    };
    expect(await ask('/ip?ip=8.8.8.8')).toEqual([200, '8.8.8.8\n']);
    // An IPv4-mapped IPv6 address is the IPv4 address (as /v1/ip reports one).
    expect(await ask('/ip?ip=%3A%3Affff%3A8.8.8.8')).toEqual([200, '8.8.8.8\n']);
    expect(await ask('/?ip=2001:4860:4860:0:0:0:0:8888')).toEqual([200, '2001:4860:4860::8888\n']);
    expect(await ask('/country-iso?ip=8.8.8.8')).toEqual([200, `${String(data.location.country_code)}\n`]);
    expect(await ask('/city?ip=8.8.8.8')).toEqual([200, `${String(data.location.city)}\n`]);
    expect(await ask('/asn-org?ip=8.8.8.8')).toEqual([200, `${String(data.network.organization)}\n`]);
    expect(await ask('/hostname?ip=8.8.8.8')).toEqual([200, 'dns.google\n']);
    // The caller's own answers are untouched by the lookups.
    expect(await ask('/ip?')).toEqual([200, '9.9.9.9\n']);
  });

  it('a special-use address answers what it is: no place or network, no reverse name asked for (test/ip/param-lookups.test.ts), and why, for JSON', async () => {
    const json = await curl(at(proxied, '/json?ip=2001:db8::10'), from('9.9.9.9'));
    expect(json.status).toBe(200);
    expectContract('GET', '/json', json);
    const read = readEchoip(json.text);
    expect(read).toMatchObject({ ip: '2001:db8::10', country: null, city: null, asn: null, latitude: null, hostname: null, country_eu: null });
    expect((await curl(at(proxied, '/city?ip=10.1.2.3'), from('9.9.9.9'))).text).toBe('\n');
    const why = await curl(at(proxied, '/city?ip=10.1.2.3'), [...from('9.9.9.9'), '-H', 'Accept: application/json']);
    expect(why.status).toBe(404);
    expectContract('GET', '/city', why);
    expect(why.body).toMatchObject({ code: 'not_found', detail: 'No city is known for 10.1.2.3: it is a private-use (RFC 1918) address, with no location or network on the internet.' });
  });

  it('a malformed or repeated ?ip= is a 400 naming the parameter: a line for curl, a problem document for JSON', async () => {
    for (const bad of ['999.1.1.1', 'banana', '127.1', '', '8.8.8.8%25eth0', '%3A%3A8.8.8.8']) {
      const text = await curl(at(proxied, `/country?ip=${bad}`), from('9.9.9.9'));
      expect([bad, text.status]).toEqual([bad, 400]);
      expectContract('GET', '/country', text);
      expect(text.text).toMatch(/^Invalid parameter: The query parameter "ip" must be an IPv4 address \(four dotted parts\) or an IPv6 address; got "[^"]*"\.\n$/);
    }
    const json = await curl(at(proxied, '/json?ip=1.1.1.1&ip=8.8.8.8'), from('9.9.9.9'));
    expect(json.status).toBe(400);
    expectContract('GET', '/json', json);
    expect(json.body).toMatchObject({ code: 'invalid_parameter', detail: 'The query parameter "ip" must be given once.' });
  });

  it('lookups of other addresses count against the caller\'s own ip limit, not the looked-up address\'s; refused ones cost nothing', async () => {
    const ask = (caller: string, path: string) => curl(at(limited, path), from(caller)).then((r) => r.status);
    expect(await ask('198.51.100.7', '/json?ip=not-an-address')).toBe(400);
    expect(await ask('198.51.100.7', '/json?ip=8.8.8.8')).toBe(200);
    expect(await ask('198.51.100.7', '/country?ip=1.1.1.1')).toBe(200);
    expect(await ask('198.51.100.7', '/json?ip=2001:4860:4860::8888')).toBe(200);
    expect(await ask('198.51.100.7', '/ip?ip=9.9.9.9')).toBe(429);
    // The looked-up address, as a caller, has its whole quota.
    expect(await ask('8.8.8.8', '/json')).toBe(200);
  });

  it('keeps no looked-up address: the access log names the path, not the query', () => {
    const logs = proxied.rawLogs();
    expect(logs).toContain('/json');
    for (const looked of ['2001:db8::10', '10.1.2.3', '8.8.8.8', '2001:4860:4860']) expect(logs).not.toContain(looked);
  });
});
