// Unit tests of the Worker's configuration table, inside workerd with the suite's real bindings:
// loadWorkersConfig called directly for every refusal (exact words), the defaults, the bindings
// the vars need, and docs/operations.md's "Deploying to Cloudflare Workers" held to WORKERS_VARIABLES.
// (surface.test.ts checks what a request gets from a misconfigured Worker.)
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import operations from '../../docs/operations.md?raw';
import { SHARED } from '../../src/core/config/vars.js';
import { DEFAULT_LIMITS } from '../../src/core/ratelimit/limits.js';
import { ConfigError, LIMIT_BINDINGS, WORKERS_DNS_CACHE_BYTES, WORKERS_DOH_DEFAULT, WORKERS_VARIABLES, loadWorkersConfig } from '../../src/runtime/workers/adapter/config.js';
import type { WorkerEnv } from '../../src/runtime/workers/adapter/env.js';
import { GOOD_ORIGINS, HOSTILE_IPV6_ORIGIN, HOSTILE_ORIGINS } from '../support/hostile-origins.js';
import { drift, expand, namesIn, readmeSection, tableRows } from '../support/readme-config.js';

const KEY = 'workers-config-key-0123456789abcdef0123';

/** The suite's bindings (wrangler.jsonc) without its vars, then `vars`. */
function envWith(vars: Record<string, unknown>): WorkerEnv {
  const bindings = Object.entries(env as unknown as WorkerEnv).filter(([, value]) => typeof value !== 'string');
  return { ...Object.fromEntries(bindings), ...vars };
}

function refusal(vars: Record<string, unknown>): { variable: string; message: string } | 'accepted' {
  try {
    loadWorkersConfig(envWith(vars));
    return 'accepted';
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { variable: err.variable, message: err.message };
  }
}

describe('loadWorkersConfig', () => {
  it('with only the key set, every var takes its Workers default', () => {
    expect(loadWorkersConfig(envWith({ NETDIAG_RATE_LIMIT_KEY: KEY }))).toEqual({
      publicUrl: undefined,
      dohUrl: WORKERS_DOH_DEFAULT,
      dnsTimeoutMs: 2000,
      dnsCacheSize: 10_000,
      // An isolate's 128 MB: a sixteenth, not Node's 64 MiB.
      dnsCacheBytes: WORKERS_DNS_CACHE_BYTES,
      dnsCacheMaxEntryBytes: 32 * 1024,
      dnsMaxOutstanding: 1000,
      limits: DEFAULT_LIMITS,
      limiter: 'durable-object',
      rateLimitKey: KEY,
      probes: new Map(),
      eventsSink: { kind: 'log' },
      eventsQueueSize: 10_000,
      logLevel: 'info',
      accessLog: false,
      speedTestTargets: true,
      families: { ipv4: null, ipv6: null },
      servers: [],
    });
  });

  it("reads wrangler.jsonc's own vars", () => {
    const config = loadWorkersConfig(env as unknown as WorkerEnv);
    expect(config.eventsSink).toEqual({ kind: 'analytics-engine' });
    expect([...config.probes.keys()]).toEqual(['wnam', 'enam', 'weur', 'eeur', 'apac-ne', 'oc']);
  });

  it('reads a good value of every var', () => {
    const config = loadWorkersConfig(
      envWith({
        NETDIAG_RATE_LIMIT_KEY: KEY,
        NETDIAG_PUBLIC_URL: 'https://netdiag.example.com/',
        NETDIAG_DNS_UPSTREAM: 'http://127.0.0.1:8053/dns-query',
        NETDIAG_DNS_TIMEOUT_MS: '500',
        NETDIAG_DNS_CACHE_SIZE: '0',
        NETDIAG_DNS_CACHE_BYTES: '1000',
        NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '1',
        NETDIAG_DNS_MAX_OUTSTANDING: '5',
        NETDIAG_RATE_LIMITS: 'probe=3',
        NETDIAG_LIMITER: 'binding',
        NETDIAG_PROBES: 'apac-se=durable-object, apac-ne=https://probe.example/base',
        NETDIAG_EVENTS_SINK: 'https://user:secret@collector.example/ingest',
        NETDIAG_EVENTS_QUEUE: '7',
        NETDIAG_LOG_LEVEL: 'silent',
        NETDIAG_ACCESS_LOG: 'on',
        NETDIAG_SPEEDTEST_TARGETS: 'off',
        NETDIAG_TURN_URL: 'turns:turn.example.net:5349',
        NETDIAG_TURN_SECRET: 's'.repeat(40),
        NETDIAG_TURN_TTL_SECONDS: '60',
        NETDIAG_IPV4_URL: 'https://ipv4.netdiag.example.com',
        NETDIAG_IPV6_URL: 'https://ipv6.netdiag.example.com/',
        NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.netdiag.example.com","location":"Frankfurt","families":["ipv6"]}]',
        // Node's, not read here: the platform decides them.
        PORT: 'not read',
        NETDIAG_COLO: 'not read',
      }),
    );
    expect(config).toEqual({
      publicUrl: 'https://netdiag.example.com',
      dohUrl: 'http://127.0.0.1:8053/dns-query',
      dnsTimeoutMs: 500,
      dnsCacheSize: 0,
      dnsCacheBytes: 1000,
      dnsCacheMaxEntryBytes: 1,
      dnsMaxOutstanding: 5,
      limits: { ...DEFAULT_LIMITS, probe: 3 },
      limiter: 'binding',
      rateLimitKey: KEY,
      probes: new Map([
        ['apac-se', { kind: 'durable-object' }],
        ['apac-ne', { kind: 'url', url: 'https://probe.example/base' }],
      ]),
      eventsSink: { kind: 'http', url: 'https://collector.example/ingest', authorization: `Basic ${btoa('user:secret')}` },
      eventsQueueSize: 7,
      logLevel: 'silent',
      accessLog: true,
      speedTestTargets: false,
      turn: { url: 'turns:turn.example.net:5349', secret: 's'.repeat(40), ttlSeconds: 60 },
      families: { ipv4: 'https://ipv4.netdiag.example.com', ipv6: 'https://ipv6.netdiag.example.com' },
      servers: [{ name: 'fra', url: 'https://fra.netdiag.example.com', location: 'Frankfurt', families: ['ipv6'] }],
    });
  });

  it.each(['http://localhost:8053/dns-query', 'http://[::1]:8053/dns-query', 'https://127.0.0.1/dns-query'])('NETDIAG_DNS_UPSTREAM=%s: plain http and IP literals to loopback only', (url) => {
    expect(loadWorkersConfig(envWith({ NETDIAG_RATE_LIMIT_KEY: KEY, NETDIAG_DNS_UPSTREAM: url })).dohUrl).toBe(url);
  });

  it.each([
    [{ NETDIAG_RATE_LIMIT_KEY: undefined }, 'NETDIAG_RATE_LIMIT_KEY', 'is required on Workers (a secret: wrangler secret put NETDIAG_RATE_LIMIT_KEY); make one with `openssl rand -base64 32` and set the same value on every instance'],
    [{ NETDIAG_RATE_LIMIT_KEY: 'short' }, 'NETDIAG_RATE_LIMIT_KEY', 'must be at least 32 characters of secret, got 5: make one with `openssl rand -base64 32` and set the same value on every instance'],
    [{ NETDIAG_DNS_UPSTREAM: 'https://1.1.1.1/dns-query' }, 'NETDIAG_DNS_UPSTREAM', `"https://1.1.1.1/dns-query" names an IP address, which Workers cannot fetch: use a host name, such as ${WORKERS_DOH_DEFAULT}`],
    [{ NETDIAG_DNS_UPSTREAM: 'https://[2606:4700::1111]/dns-query' }, 'NETDIAG_DNS_UPSTREAM', `"https://[2606:4700::1111]/dns-query" names an IP address, which Workers cannot fetch: use a host name, such as ${WORKERS_DOH_DEFAULT}`],
    [{ NETDIAG_DNS_UPSTREAM: 'http://dns.example/dns-query' }, 'NETDIAG_DNS_UPSTREAM', '"http://dns.example/dns-query" must be an https:// DoH URL (plain http only to loopback, for local development)'],
    [{ NETDIAG_DNS_UPSTREAM: 'udp://1.1.1.1' }, 'NETDIAG_DNS_UPSTREAM', '"udp://1.1.1.1" must use https: or http:'],
    [{ NETDIAG_DNS_UPSTREAM: 'https://user:pw@dns.example/dns-query' }, 'NETDIAG_DNS_UPSTREAM', 'must not carry credentials'],
    [{ NETDIAG_LIMITER: 'redis' }, 'NETDIAG_LIMITER', 'must be durable-object or binding, got "redis"'],
    [{ NETDIAG_PROBES: 'apac-ne=durable-object,apac-se=durable-object' }, 'NETDIAG_PROBES', 'apac-ne and apac-se cannot both be durable-object: one "apac" location hint serves one of them; give the other a URL probe'],
    [{ NETDIAG_PROBES: 'mars=durable-object' }, 'NETDIAG_PROBES', 'unknown region "mars"'],
    [{ NETDIAG_PROBES: 'weur' }, 'NETDIAG_PROBES', '"weur" is not region=durable-object or region=url'],
    [{ NETDIAG_PROBES: 'weur=ftp://probe.example' }, 'NETDIAG_PROBES', '"ftp://probe.example" must use http: or https:'],
    [{ NETDIAG_RATE_LIMITS: 'dns=0' }, 'NETDIAG_RATE_LIMITS', 'limit for "dns" must be a whole number from 1 to 100000000, got "0"'],
    [{ NETDIAG_EVENTS_SINK: 'kafka' }, 'NETDIAG_EVENTS_SINK', '"kafka" must be log, none, analytics-engine or an http(s):// URL'],
    [{ NETDIAG_PUBLIC_URL: 'ftp://netdiag.example.com' }, 'NETDIAG_PUBLIC_URL', '"ftp://netdiag.example.com" must use http: or https:'],
    [{ NETDIAG_DNS_CACHE_BYTES: '17179869185' }, 'NETDIAG_DNS_CACHE_BYTES', 'must be a whole number from 0 to 17179869184, got "17179869185"'],
    [{ NETDIAG_EVENTS_QUEUE: '0' }, 'NETDIAG_EVENTS_QUEUE', 'must be a whole number from 1 to 1000000, got "0"'],
    [{ NETDIAG_LOG_LEVEL: 'loud' }, 'NETDIAG_LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, silent'],
    [{ NETDIAG_ACCESS_LOG: 'yes' }, 'NETDIAG_ACCESS_LOG', 'must be on or off, got "yes"'],
    [{ NETDIAG_SPEEDTEST_TARGETS: 'maybe' }, 'NETDIAG_SPEEDTEST_TARGETS', 'must be on or off, got "maybe"'],
  ])('refuses %o, naming %s', (vars, variable, message) => {
    expect(refusal({ NETDIAG_RATE_LIMIT_KEY: KEY, ...vars })).toEqual({ variable, message });
  });

  // The origin goes into the page's Content-Security-Policy: only a scheme, a host and a port may.
  it.each([...HOSTILE_ORIGINS.map(([value, message]) => ['NETDIAG_IPV4_URL', value, message]), ['NETDIAG_IPV6_URL', ...HOSTILE_IPV6_ORIGIN]])('%s=%o is refused, naming it: %s', (variable, value, message) => {
    expect(refusal({ NETDIAG_RATE_LIMIT_KEY: KEY, [variable]: value })).toEqual({ variable, message });
  });

  it.each(GOOD_ORIGINS)('%s=%s is accepted as %s', (variable, value, origin) => {
    const { families } = loadWorkersConfig(envWith({ NETDIAG_RATE_LIMIT_KEY: KEY, [variable]: value }));
    expect(variable === 'NETDIAG_IPV4_URL' ? families.ipv4 : families.ipv6).toBe(origin);
  });

  it('the key is read first: unset, it is named before any other bad var', () => {
    expect(refusal({ NETDIAG_LIMITER: 'redis' })).toMatchObject({ variable: 'NETDIAG_RATE_LIMIT_KEY' });
  });

  const NEEDS: [Record<string, string>, string, string, string][] = [
    [{}, 'RATE_LIMITER', 'NETDIAG_LIMITER', 'durable-object'],
    ...Object.values(LIMIT_BINDINGS).map((binding): [Record<string, string>, string, string, string] => [{ NETDIAG_LIMITER: 'binding' }, binding, 'NETDIAG_LIMITER', 'binding']),
    [{ NETDIAG_PROBES: 'weur=durable-object' }, 'REGION_PROBE', 'NETDIAG_PROBES', 'a durable-object probe'],
    [{ NETDIAG_EVENTS_SINK: 'analytics-engine' }, 'ANALYTICS', 'NETDIAG_EVENTS_SINK', 'analytics-engine'],
  ];

  it.each(NEEDS)('%o without the %s binding is refused, naming both', (vars, binding, variable, why) => {
    expect(refusal({ NETDIAG_RATE_LIMIT_KEY: KEY, ...vars, [binding]: undefined })).toEqual({
      variable,
      message: `${why} needs the ${binding} binding, which this Worker does not have (wrangler.jsonc)`,
    });
  });
});

describe("docs/operations.md's Workers section states WORKERS_VARIABLES", () => {
  const section = readmeSection(operations, 'Deploying to Cloudflare Workers');
  const vars = section.slice(section.indexOf('**Vars.**'), section.indexOf('Different or new:'));
  const table = section.slice(section.indexOf('Different or new:'), section.indexOf('Not read on Workers'));
  const notRead = section.slice(section.indexOf('Not read on Workers'), section.indexOf('A bad var is logged'));
  const known = Object.keys(WORKERS_VARIABLES);
  const rows = tableRows(table);
  const tabled = rows.flatMap((row) => row.names);
  const sameAsNode = expand(namesIn(vars), known).filter((name) => !tabled.includes(name));

  it('every var read is in the "mean what they mean on Node" list or the table, and nothing else is', () => {
    expect(drift(WORKERS_VARIABLES, rows, { elsewhere: sameAsNode })).toEqual([]);
    expect(sameAsNode.filter((name) => !known.includes(name))).toEqual([]);
  });

  it('a var said to mean what it means on Node is read by the row Node reads it with', () => {
    // NETDIAG_RATE_LIMITS is built from the limiter's own parser on each runtime (src/core/config
    // may not know the limiter); the others are the one shared row.
    const shared: Record<string, unknown> = SHARED;
    const workers: Record<string, unknown> = WORKERS_VARIABLES;
    expect(sameAsNode.filter((name) => name !== 'NETDIAG_RATE_LIMITS' && workers[name] !== shared[name])).toEqual([]);
  });

  it('none of the vars said not to be read on Workers is read', () => {
    const patterns = namesIn(notRead);
    expect(patterns.length).toBeGreaterThan(5);
    expect(known.filter((name) => expand(patterns, [name]).includes(name))).toEqual([]);
  });
});
