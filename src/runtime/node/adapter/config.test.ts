// Unit tests of `netdiag serve`'s and `netdiag probe`'s configuration tables: every refusal by
// its variable and exact message, bounds, defaults, a full good configuration, the order faults
// are named in, the README's table held to the code's, and the start-up configuration line.
// (test/operators/start-up-refusals.test.ts keeps the few checks that need the built program.)
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../../../../test/support/doh-relay.js';
import { drift, namesIn, readmeSection, tableRows } from '../../../../test/support/readme-config.js';
import { GOOD_ORIGINS, HOSTILE_IPV6_ORIGIN, HOSTILE_ORIGINS } from '../../../../test/support/hostile-origins.js';
import { requireCommands } from '../../../../test/support/system.js';
import { ConfigError } from '../../../core/config/table.js';
import { DEFAULT_LIMITS } from '../../../core/ratelimit/limits.js';
import { configurationSummary } from './config-summary.js';
import { PROBE_VARIABLES, SERVE_VARIABLES, loadConfig, loadProbeConfig, type Env } from './config.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-config-'));
writeFileSync(join(dir, 'not.pem'), 'this is not a certificate\n');
const README = readFileSync(new URL('../../../../README.md', import.meta.url), 'utf8');
const API_DOC = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');

/** What a load refused: the variable and message of its ConfigError (anything else is rethrown). */
function refusal(load: (env: Env) => unknown, env: Env): { variable: string; message: string } | 'accepted' {
  try {
    load(env);
    return 'accepted';
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { variable: err.variable, message: err.message };
  }
}

/** Every refusal test/operators/start-up-refusals.test.ts checked by starting the program, by its exact words. */
const BAD: [string, Env, string][] = [
  ['PORT', { PORT: 'eighty' }, 'must be a whole number from 0 to 65535, got "eighty"'],
  ['PORT', { PORT: '70000' }, 'must be a whole number from 0 to 65535, got "70000"'],
  ['HOST', { HOST: 'bad host!' }, '"bad host!" is not an IP address or host name'],
  ['NETDIAG_PUBLIC_URL', { NETDIAG_PUBLIC_URL: 'ftp://api.example.net' }, '"ftp://api.example.net" must use http: or https:'],
  ['NETDIAG_PUBLIC_URL', { NETDIAG_PUBLIC_URL: 'https://api.example.net/?x=1' }, 'must not have a query or fragment'],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'udp://dns.example.net' }, '"dns.example.net" must be an IP address (IPv6 in brackets) with an optional port'],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'dns://1.1.1.1' }, '"dns://1.1.1.1" must be udp://IP[:port], tcp://IP[:port] or an https:// DoH URL'],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'udp://1.1.1.1:99999' }, 'port 99999 is out of range'],
  ['NETDIAG_DNS_UPSTREAM', { NETDIAG_DNS_UPSTREAM: 'https://user:pw@dns.example/dns-query' }, 'must not carry credentials'],
  ['NETDIAG_DNS_TIMEOUT_MS', { NETDIAG_DNS_TIMEOUT_MS: '0' }, 'must be a whole number from 1 to 60000, got "0"'],
  ['NETDIAG_DNS_TIMEOUT_MS', { NETDIAG_DNS_TIMEOUT_MS: 'fast' }, 'must be a whole number from 1 to 60000, got "fast"'],
  ['NETDIAG_DNS_CACHE_SIZE', { NETDIAG_DNS_CACHE_SIZE: 'lots' }, 'must be a whole number from 0 to 10000000, got "lots"'],
  ['NETDIAG_TRUST_PROXY', { NETDIAG_TRUST_PROXY: '10.0.0.0/33' }, '"10.0.0.0/33" is not a CIDR, an IP address or "loopback"'],
  ['NETDIAG_TRUST_PROXY', { NETDIAG_TRUST_PROXY: 'proxy.example.net' }, '"proxy.example.net" is not a CIDR, an IP address or "loopback"'],
  ['NETDIAG_PROXY_PROTOCOL', { NETDIAG_PROXY_PROTOCOL: 'maybe' }, 'must be on or off, got "maybe"'],
  ['NETDIAG_PROXY_PROTOCOL', { NETDIAG_PROXY_PROTOCOL: 'on' }, 'is on, but NETDIAG_TRUST_PROXY names no peer to accept it from'],
  ['NETDIAG_COLO', { NETDIAG_COLO: 'ams' }, 'must be three capital letters, got "ams"'],
  ['NETDIAG_COLO', { NETDIAG_COLO: 'AMST' }, 'must be three capital letters, got "AMST"'],
  ['NETDIAG_GEOIP_CITY', { NETDIAG_GEOIP_CITY: `${dir}/missing-city.mmdb` }, `cannot read "${dir}/missing-city.mmdb" (ENOENT)`],
  ['NETDIAG_GEOIP_ASN', { NETDIAG_GEOIP_ASN: `${dir}/missing-asn.mmdb` }, `cannot read "${dir}/missing-asn.mmdb" (ENOENT)`],
  ['NETDIAG_RATE_LIMITS', { NETDIAG_RATE_LIMITS: 'dns=0' }, 'limit for "dns" must be a whole number from 1 to 100000000, got "0"'],
  ['NETDIAG_RATE_LIMITS', { NETDIAG_RATE_LIMITS: 'smtp=5' }, 'unknown operation "smtp" (expected ip, dns, probe, events, speedtest, rpm, turn, port)'],
  ['NETDIAG_TURN_URL', { NETDIAG_TURN_URL: 'stun:turn.example.net:3478' }, '"stun:turn.example.net:3478" must be turn:host[:port] or turns:host[:port], optionally with ?transport=udp or tcp'],
  ['NETDIAG_TURN_URL', { NETDIAG_TURN_URL: 'turn:turn.example.net:70000' }, '"turn:turn.example.net:70000" names port 70000, outside 1 to 65535'],
  ['NETDIAG_TURN_SECRET', { NETDIAG_TURN_SECRET: 'short' }, 'must be at least 32 characters of secret (the TURN server\'s static-auth-secret), got 5: make one with `openssl rand -base64 32`'],
  ['NETDIAG_TURN_SECRET', { NETDIAG_TURN_URL: 'turn:turn.example.net:3478' }, "is required with NETDIAG_TURN_URL: the TURN server's static-auth-secret, to mint credentials it accepts"],
  ['NETDIAG_TURN_URL', { NETDIAG_TURN_SECRET: 'x'.repeat(32) }, 'is required with NETDIAG_TURN_SECRET: the turn:host:port the credentials are for'],
  ['NETDIAG_TURN_TTL_SECONDS', { NETDIAG_TURN_TTL_SECONDS: '30' }, 'must be a whole number from 60 to 86400, got "30"'],
  ['NETDIAG_IPV4_URL', { NETDIAG_IPV4_URL: 'https://ipv4.example.net/ip' }, '"https://ipv4.example.net/ip" must be an origin only (scheme, host and port), such as https://ipv4.example.net'],
  ['NETDIAG_IPV4_URL', { NETDIAG_IPV4_URL: 'http://[::1]:8080' }, '"http://[::1]:8080" names an IPv6 address, which cannot answer over IPv4'],
  ['NETDIAG_IPV6_URL', { NETDIAG_IPV6_URL: 'http://127.0.0.1:8080' }, '"http://127.0.0.1:8080" names an IPv4 address, which cannot answer over IPv6'],
  ['NETDIAG_IPV6_URL', { NETDIAG_IPV6_URL: 'ftp://ipv6.example.net' }, '"ftp://ipv6.example.net" must use http: or https:'],
  ['NETDIAG_IPV6_URL', { NETDIAG_IPV6_URL: 'https://ipv6.example.net?x=1' }, '"https://ipv6.example.net?x=1" must be an origin only (scheme, host and port), such as https://ipv6.example.net'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: 'fra=https://fra.example.net' }, 'must be a JSON array of {"name", "url", "location", "families"} objects'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '{"name":"fra"}' }, 'must be a JSON array of {"name", "url", "location", "families"} objects'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"Frankfurt 1","url":"https://fra.example.net","location":"Frankfurt"}]' }, 'entry 1: "name" must be 1 to 32 lowercase letters, digits and hyphens, starting with a letter or digit (it is what --server takes)'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net/speed","location":"Frankfurt"}]' }, 'entry 1 ("fra"): "https://fra.example.net/speed" must be an origin only (scheme, host and port), such as https://fra.example.net'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://*.example.net","location":"Frankfurt"}]' }, 'entry 1 ("fra"): "https://*.example.net" must name its host with letters, digits and hyphens in dot-separated labels (no empty label or trailing dot), or an IP address; got the host "*.example.net"'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net","location":""}]' }, 'entry 1 ("fra"): "location" must be 1 to 64 characters without control characters, such as "Frankfurt, DE"'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net","location":"Frankfurt","families":["ipv5"]}]' }, 'entry 1 ("fra"): "families" must be ["ipv4"], ["ipv6"] or ["ipv4", "ipv6"]'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net","location":"Frankfurt","region":"weur"}]' }, 'entry 1: unknown field "region" (the fields are name, url, location and families)'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"fra","url":"https://fra.example.net","location":"Frankfurt"},{"name":"fra","url":"https://fra2.example.net","location":"Frankfurt"}]' }, 'names "fra" twice: each deployment\'s name must be its own'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"a","url":"https://fra.example.net","location":"Frankfurt"},{"name":"b","url":"https://fra.example.net:443","location":"Frankfurt"}]' }, 'names "https://fra.example.net" twice: each deployment\'s url must be its own'],
  ['NETDIAG_SERVERS', { NETDIAG_SERVERS: '[{"name":"lab","url":"http://[2001:db8::5]:8080","location":"Lab","families":["ipv4","ipv6"]}]' }, 'entry 1 ("lab"): "http://[2001:db8::5]:8080" is an IPv6 address, so "families" must be ["ipv6"]'],
  ['NETDIAG_REDIS_URL', { NETDIAG_REDIS_URL: 'http://127.0.0.1:6379' }, '"http://127.0.0.1:6379" must use redis: or rediss:'],
  ['NETDIAG_REDIS_URL', { NETDIAG_REDIS_URL: 'not a url' }, '"not a url" is not a URL'],
  ['NETDIAG_WORKERS', { NETDIAG_WORKERS: '0' }, 'must be a whole number from 1 to 256, got "0"'],
  ['NETDIAG_WORKERS', { NETDIAG_WORKERS: 'many' }, 'must be a whole number from 1 to 256, got "many"'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'mars=http://127.0.0.1:8081' }, 'unknown region "mars"'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=ftp://127.0.0.1' }, '"ftp://127.0.0.1" must use http: or https:'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur' }, '"weur" is not region=url'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://a.example,weur=http://b.example' }, 'region "weur" is given twice'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://user:secret@a.example' }, 'the URL for "weur" must not carry credentials'],
  ['NETDIAG_PROBES', { NETDIAG_PROBES: 'weur=http://a.example/?x=1' }, 'the URL for "weur" must not have a query or fragment'],
  ['NETDIAG_EVENTS_SINK', { NETDIAG_EVENTS_SINK: 'kafka' }, '"kafka" must be log, none or an http(s):// URL'],
  ['NETDIAG_TLS_CERT', { NETDIAG_TLS_KEY: `${dir}/not.pem` }, 'must be set when NETDIAG_TLS_KEY is'],
  ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: `${dir}/not.pem` }, 'must be set when NETDIAG_TLS_CERT is'],
  ['NETDIAG_TLS_CERT', { NETDIAG_TLS_CERT: `${dir}/missing.pem`, NETDIAG_TLS_KEY: `${dir}/not.pem` }, `cannot read "${dir}/missing.pem" (ENOENT)`],
  ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: `${dir}/not.pem`, NETDIAG_TLS_KEY: `${dir}/not.pem` }, 'the key and certificate are not a valid PEM pair'],
  ['NETDIAG_LOG_LEVEL', { NETDIAG_LOG_LEVEL: 'loud' }, 'must be one of fatal, error, warn, info, debug, silent'],
  ['NETDIAG_ACCESS_LOG', { NETDIAG_ACCESS_LOG: 'yes' }, 'must be on or off, got "yes"'],
  ['NETDIAG_TRUST_PROXY_HEADER', { NETDIAG_TRUST_PROXY_HEADER: 'x-client-ip' }, 'must be one of x-forwarded-for, forwarded, x-real-ip, got "x-client-ip"'],
  ['NETDIAG_TRUST_PROXY_HEADER', { NETDIAG_TRUST_PROXY_HEADER: 'x-forwarded-for, forwarded' }, 'must be one of x-forwarded-for, forwarded, x-real-ip, got "x-forwarded-for, forwarded"'],
  ['NETDIAG_HEADERS_TIMEOUT_MS', { NETDIAG_HEADERS_TIMEOUT_MS: '50' }, 'must be a whole number from 100 to 600000, got "50"'],
  ['NETDIAG_REQUEST_TIMEOUT_MS', { NETDIAG_REQUEST_TIMEOUT_MS: '5000' }, 'must be at least NETDIAG_HEADERS_TIMEOUT_MS (10000), got 5000'],
  ['NETDIAG_KEEPALIVE_TIMEOUT_MS', { NETDIAG_KEEPALIVE_TIMEOUT_MS: 'long' }, 'must be a whole number from 100 to 600000, got "long"'],
  ['NETDIAG_DNS_CACHE_BYTES', { NETDIAG_DNS_CACHE_BYTES: '-1' }, 'must be a whole number from 0 to 17179869184, got "-1"'],
  ['NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES', { NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '0' }, 'must be a whole number from 1 to 1048576, got "0"'],
  ['NETDIAG_DNS_MAX_OUTSTANDING', { NETDIAG_DNS_MAX_OUTSTANDING: '1000000' }, 'must be a whole number from 1 to 100000, got "1000000"'],
  ['NETDIAG_RATE_LIMIT_KEY', { NETDIAG_RATE_LIMIT_KEY: 'short' }, "must be at least 32 characters of secret, got 5: make one with `openssl rand -base64 32` and set the same value on every instance"],
  ['NETDIAG_EVENTS_SINK', { NETDIAG_EVENTS_SINK: 'https://us%3Aer:pw@collector.example/ingest' }, 'the user name in the URL must not contain ":"'],];

/** Variables with bounds, a value outside them, and the bounds the error must name. */
const BOUNDED: [string, string, string][] = [
  ['NETDIAG_RATE_LIMITS', 'ip=1000000000', 'from 1 to 100000000'],
  ['NETDIAG_RATE_LIMITS', 'dns=0', 'from 1 to 100000000'],
  ['PORT', '99999999999999999999', 'from 0 to 65535'],
  ['NETDIAG_WORKERS', '257', 'from 1 to 256'],
  ['NETDIAG_DNS_TIMEOUT_MS', '60001', 'from 1 to 60000'],
  ['NETDIAG_DNS_CACHE_SIZE', '10000001', 'from 0 to 10000000'],
  ['NETDIAG_DNS_MAX_OUTSTANDING', '0', 'from 1 to 100000'],
  ['NETDIAG_EVENTS_QUEUE', '0', 'from 1 to 1000000'],
  ['NETDIAG_HEADERS_TIMEOUT_MS', '99', 'from 100 to 600000'],
];

describe('netdiag serve: loadConfig', () => {
  it.each(BAD)('refuses a bad %s, naming it: %o', (variable, env, message) => {
    expect(refusal(loadConfig, { PORT: '0', HOST: '127.0.0.1', ...env })).toEqual({ variable, message });
  });

  // The origin goes into the page's Content-Security-Policy: only a scheme, a host and a port may.
  it.each([...HOSTILE_ORIGINS.map(([value, message]) => ['NETDIAG_IPV4_URL', value, message]), ['NETDIAG_IPV6_URL', ...HOSTILE_IPV6_ORIGIN]])('%s=%o is refused, naming it: %s', (variable, value, message) => {
    expect(refusal(loadConfig, { [variable]: value })).toEqual({ variable, message });
  });

  it('NETDIAG_SERVERS: an entry named by an address serves its own family when none is named; a host name both', () => {
    const list = '[{"name":"lab","url":"http://192.0.2.5:8080","location":"Lab"},{"name":"fra","url":"https://fra.example.net","location":"Frankfurt"}]';
    expect(loadConfig({ NETDIAG_SERVERS: list }).servers.map((s) => [s.name, s.families])).toEqual([['lab', ['ipv4']], ['fra', ['ipv4', 'ipv6']]]);
  });

  it.each(GOOD_ORIGINS)('%s=%s is accepted as %s', (variable, value, origin) => {
    const { families } = loadConfig({ [variable]: value });
    expect(variable === 'NETDIAG_IPV4_URL' ? families.ipv4 : families.ipv6).toBe(origin);
  });

  it.each(BOUNDED)('%s=%s is refused naming its bounds (%s)', (variable, value, bounds) => {
    const refused = refusal(loadConfig, { [variable]: value });
    expect(refused).toEqual({ variable, message: expect.stringContaining(bounds) as string });
  });

  it('NETDIAG_REDIS_URL without NETDIAG_RATE_LIMIT_KEY is refused, saying how to make a key', () => {
    expect(refusal(loadConfig, { NETDIAG_REDIS_URL: 'redis://127.0.0.1:6379' })).toEqual({
      variable: 'NETDIAG_RATE_LIMIT_KEY',
      message: 'is required with NETDIAG_REDIS_URL: make one with `openssl rand -base64 32` and set the same value on every instance',
    });
  });

  it('with nothing set, every variable takes its default', () => {
    const config = loadConfig({});
    expect({ ...config, trust: config.trust.any }).toEqual({
      port: 8080,
      host: undefined,
      publicUrl: undefined,
      dnsUpstream: { protocol: 'https', url: 'https://1.1.1.1/dns-query', text: 'https://1.1.1.1/dns-query' },
      dnsTimeoutMs: 2000,
      dnsCacheSize: 10_000,
      dnsCacheBytes: 64 * 1024 * 1024,
      dnsCacheMaxEntryBytes: 32 * 1024,
      dnsMaxOutstanding: 1000,
      trust: false,
      trustText: 'none',
      trustHeader: 'x-forwarded-for',
      proxyProtocol: false,
      colo: null,
      geoipCity: undefined,
      geoipAsn: undefined,
      limits: DEFAULT_LIMITS,
      redisUrl: undefined,
      rateLimitKey: undefined,
      workers: 1,
      probes: new Map(),
      eventsSink: { kind: 'log' },
      eventsQueueSize: 10_000,
      tls: undefined,
      timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, stallMs: 20_000 },
      logLevel: 'info',
      accessLog: false,
      speedTestTargets: true,
      transfers: { atOnce: 32, bytesPerMinute: 100_000_000_000 },
      portCheck: false,
      specialUsePtr: false,
      families: { ipv4: null, ipv6: null },
      servers: [],
      metrics: undefined,
    });
  });

  it('an empty or blank variable counts as unset, and values are trimmed', () => {
    expect(loadConfig({ PORT: '', HOST: '   ', NETDIAG_DNS_TIMEOUT_MS: ' 1500 ' })).toMatchObject({ port: 8080, host: undefined, dnsTimeoutMs: 1500 });
  });

  it.runIf(requireCommands('a TLS key pair', ['openssl'], 'openssl'))('reads a good configuration of every variable', () => {
    const pair = selfSignedCertificate();
    const key = 'k'.repeat(32);
    const config = loadConfig({
      PORT: '8443',
      HOST: '::1',
      NETDIAG_PUBLIC_URL: 'https://api.example.net/base/',
      NETDIAG_DNS_UPSTREAM: 'udp://[::1]:5353',
      NETDIAG_DNS_TIMEOUT_MS: '1',
      NETDIAG_DNS_CACHE_SIZE: '0',
      NETDIAG_DNS_CACHE_BYTES: '17179869184',
      NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '1048576',
      NETDIAG_DNS_MAX_OUTSTANDING: '100000',
      NETDIAG_TRUST_PROXY: 'loopback, 10.0.0.0/8',
      NETDIAG_TRUST_PROXY_HEADER: 'X-Real-IP',
      NETDIAG_PROXY_PROTOCOL: 'on',
      NETDIAG_COLO: 'AMS',
      NETDIAG_GEOIP_CITY: pair.certFile,
      NETDIAG_GEOIP_ASN: pair.keyFile,
      NETDIAG_RATE_LIMITS: 'ip=5, speedtest=100000000',
      NETDIAG_SPEEDTEST_TARGETS: 'off',
      NETDIAG_TURN_URL: 'turn:[2001:db8::3]:3479?transport=udp',
      NETDIAG_TURN_SECRET: 't'.repeat(32),
      NETDIAG_TURN_TTL_SECONDS: '86400',
      NETDIAG_IPV4_URL: 'https://ipv4.example.net/',
      NETDIAG_IPV6_URL: 'http://[2001:DB8::8]:8080',
      NETDIAG_REDIS_URL: 'rediss://:pw@127.0.0.1:6379/2',
      NETDIAG_WORKERS: 'auto',
      NETDIAG_RATE_LIMIT_KEY: key,
      NETDIAG_PROBES: 'weur=http://10.0.2.7:8081/base, enam=https://probe.example',
      NETDIAG_EVENTS_SINK: 'https://us%C3%A9r:p%3Ass@collector.example/ingest?x=1',
      NETDIAG_EVENTS_QUEUE: '1',
      NETDIAG_TLS_CERT: pair.certFile,
      NETDIAG_TLS_KEY: pair.keyFile,
      NETDIAG_HEADERS_TIMEOUT_MS: '600000',
      NETDIAG_REQUEST_TIMEOUT_MS: '600000',
      NETDIAG_KEEPALIVE_TIMEOUT_MS: '100',
      NETDIAG_STALL_TIMEOUT_MS: '600000',
      NETDIAG_LOG_LEVEL: 'silent',
      NETDIAG_ACCESS_LOG: 'on',
      NETDIAG_METRICS_PORT: '0',
      NETDIAG_METRICS_HOST: '::',
    });
    expect(config).toMatchObject({
      port: 8443,
      host: '::1',
      publicUrl: 'https://api.example.net/base',
      dnsUpstream: { protocol: 'udp', host: '::1', port: 5353, sockets: 'shared' },
      dnsTimeoutMs: 1,
      dnsCacheSize: 0,
      dnsCacheBytes: 16 * 1024 * 1024 * 1024,
      dnsCacheMaxEntryBytes: 1024 * 1024,
      dnsMaxOutstanding: 100_000,
      trustText: 'loopback, 10.0.0.0/8',
      trustHeader: 'x-real-ip',
      proxyProtocol: true,
      colo: 'AMS',
      geoipCity: pair.certFile,
      geoipAsn: pair.keyFile,
      limits: { ...DEFAULT_LIMITS, ip: 5, speedtest: 100_000_000 },
      redisUrl: 'rediss://:pw@127.0.0.1:6379/2',
      rateLimitKey: key,
      workers: 'auto',
      probes: new Map([['weur', 'http://10.0.2.7:8081/base'], ['enam', 'https://probe.example/']]),
      // RFC 7617: UTF-8 user and password joined by the colon, in base64; the URL keeps neither.
      eventsSink: { kind: 'http', url: 'https://collector.example/ingest?x=1', authorization: `Basic ${Buffer.from('usér:p:ss').toString('base64')}` },
      eventsQueueSize: 1,
      tls: { cert: readFileSync(pair.certFile), key: readFileSync(pair.keyFile) },
      timeouts: { headersMs: 600_000, requestMs: 600_000, keepAliveMs: 100, stallMs: 600_000 },
      logLevel: 'silent',
      accessLog: true,
      speedTestTargets: false,
      turn: { url: 'turn:[2001:db8::3]:3479?transport=udp', secret: 't'.repeat(32), ttlSeconds: 86_400 },
      families: { ipv4: 'https://ipv4.example.net', ipv6: 'http://[2001:db8::8]:8080' },
      metrics: { port: 0, host: '::' },
    });
    expect(config.trust.any).toBe(true);
  });

  it.each([
    ['udp://127.0.0.1', undefined, 'shared'],
    ['udp://[::1]', undefined, 'shared'],
    ['udp://8.8.8.8', undefined, 'per-query'],
    ['udp://127.0.0.1', 'per-query', 'per-query'],
    ['udp://8.8.8.8', 'shared', 'shared'],
  ])('NETDIAG_DNS_UPSTREAM=%s with NETDIAG_DNS_UDP_SOCKETS=%s uses %s sockets', (upstream, sockets, expected) => {
    const env: Env = { NETDIAG_DNS_UPSTREAM: upstream, NETDIAG_DNS_UDP_SOCKETS: sockets };
    expect(loadConfig(env).dnsUpstream).toMatchObject({ protocol: 'udp', port: 53, sockets: expected });
  });

  it.each([
    [{ NETDIAG_DNS_UPSTREAM: 'tcp://127.0.0.1', NETDIAG_DNS_UDP_SOCKETS: 'shared' }, 'NETDIAG_DNS_UDP_SOCKETS', 'applies only to a udp:// NETDIAG_DNS_UPSTREAM'],
    [{ NETDIAG_DNS_UDP_SOCKETS: 'per-query' }, 'NETDIAG_DNS_UDP_SOCKETS', 'applies only to a udp:// NETDIAG_DNS_UPSTREAM'],
    [{ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1', NETDIAG_DNS_UDP_SOCKETS: 'pooled' }, 'NETDIAG_DNS_UDP_SOCKETS', 'must be per-query or shared, got "pooled"'],
    [{ NETDIAG_METRICS_HOST: '0.0.0.0' }, 'NETDIAG_METRICS_HOST', 'has no effect without NETDIAG_METRICS_PORT'],
    [{ PORT: '9000', NETDIAG_METRICS_PORT: '9000' }, 'NETDIAG_METRICS_PORT', 'must differ from PORT (9000)'],
    [{ NETDIAG_HEADERS_TIMEOUT_MS: '40000' }, 'NETDIAG_REQUEST_TIMEOUT_MS', 'must be at least NETDIAG_HEADERS_TIMEOUT_MS (40000), got 30000'],
    [{ NETDIAG_TRUST_PROXY: '10.0.0.1,,10.0.0.2' }, 'NETDIAG_TRUST_PROXY', 'empty entry'],
    [{ NETDIAG_RATE_LIMITS: 'ip=5,ip=6' }, 'NETDIAG_RATE_LIMITS', 'operation "ip" is given twice'],
    [{ NETDIAG_PROBES: 'weur=' }, 'NETDIAG_PROBES', '"" is not a URL'],
    [{ NETDIAG_EVENTS_SINK: 'https://%zz:pw@collector.example/' }, 'NETDIAG_EVENTS_SINK', 'the credentials in the URL are not valid percent-encoding'],
  ])('checks spanning variables, and faults within one: %o', (env, variable, message) => {
    expect(refusal(loadConfig, env)).toEqual({ variable, message });
  });

  it('PORT=0 may share its number with NETDIAG_METRICS_PORT=0 (each gets a free port)', () => {
    expect(loadConfig({ PORT: '0', NETDIAG_METRICS_PORT: '0' }).metrics).toEqual({ port: 0, host: '127.0.0.1' });
  });

  it('names the first bad variable in the table, then checks spanning variables, then the files', () => {
    const missing = join(dir, 'missing.pem');
    expect(refusal(loadConfig, { PORT: 'x', NETDIAG_COLO: 'x' })).toMatchObject({ variable: 'PORT' });
    expect(refusal(loadConfig, { NETDIAG_PROXY_PROTOCOL: 'on', NETDIAG_LOG_LEVEL: 'loud' })).toMatchObject({ variable: 'NETDIAG_LOG_LEVEL' });
    expect(refusal(loadConfig, { NETDIAG_TLS_CERT: missing, NETDIAG_TLS_KEY: missing, NETDIAG_PROXY_PROTOCOL: 'on' })).toMatchObject({ variable: 'NETDIAG_PROXY_PROTOCOL' });
  });
});

describe('netdiag probe: loadProbeConfig', () => {
  it.each([
    ['PORT', { PORT: '70000' }, 'must be a whole number from 0 to 65535, got "70000"'],
    ['HOST', { HOST: 'not a host!' }, '"not a host!" is not an IP address or host name'],
    ['NETDIAG_LOG_LEVEL', { NETDIAG_LOG_LEVEL: 'loud' }, 'must be one of fatal, error, warn, info, debug, silent'],
    ['NETDIAG_TLS_KEY', { NETDIAG_TLS_CERT: join(dir, 'not.pem') }, 'must be set when NETDIAG_TLS_CERT is'],
    ['NETDIAG_REQUEST_TIMEOUT_MS', { NETDIAG_HEADERS_TIMEOUT_MS: '40000' }, 'must be at least NETDIAG_HEADERS_TIMEOUT_MS (40000), got 30000'],
  ])('a bad %s is refused, naming it', (variable, env, message) => {
    expect(refusal(loadProbeConfig, { PORT: '0', HOST: '127.0.0.1', ...env })).toEqual({ variable, message });
  });

  it("reads only its own variables, with PORT's default 8081", () => {
    expect(loadProbeConfig({ NETDIAG_COLO: 'not read', NETDIAG_WORKERS: 'not read' })).toEqual({
      port: 8081,
      host: undefined,
      tls: undefined,
      timeouts: { headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, stallMs: 20_000 },
      logLevel: 'info',
    });
  });
});

describe("the README states the code's tables", () => {
  it("README.md's configuration table lists exactly the variables netdiag serve reads, with their bounds and defaults", () => {
    // NODE_EXTRA_CA_CERTS is Node's own, read by Node before any of ours runs.
    expect(drift(SERVE_VARIABLES, tableRows(readmeSection(README, 'Configuration')), { notOurs: ['NODE_EXTRA_CA_CERTS'] })).toEqual([]);
  });

  it("docs/api.md's latency-probe notes name exactly the variables netdiag probe reads", () => {
    const notes = /\*\*Latency probes\.\*\*[^]*?It reads\s([^]*?)\.\s/.exec(readmeSection(API_DOC, 'Behaviour notes'))?.[1] ?? '';
    expect(namesIn(notes).sort()).toEqual(Object.keys(PROBE_VARIABLES).sort());
  });

  it('a variable missing from the README, or listed but not read, is caught', () => {
    const rows = tableRows(readmeSection(README, 'Configuration'));
    const withoutColo: Partial<typeof SERVE_VARIABLES> = { ...SERVE_VARIABLES };
    delete withoutColo.NETDIAG_COLO;
    expect(drift(withoutColo, rows, { notOurs: ['NODE_EXTRA_CA_CERTS'] })).toEqual(['NETDIAG_COLO is in the README\'s table but not read']);
    expect(drift({ ...SERVE_VARIABLES, NETDIAG_NEW: SERVE_VARIABLES.NETDIAG_COLO }, rows, { notOurs: ['NODE_EXTRA_CA_CERTS'] })).toEqual(["NETDIAG_NEW is read but not in the README's table"]);
  });
});

describe('the start-up configuration line', () => {
  it('states listeners, upstream, sink, limiter, probes and geo, with no credential, token or key', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_EVENTS_SINK: 'https://collector-user:collector-pass@collector.example/ingest?token=sink-token',
      NETDIAG_DNS_UPSTREAM: 'https://dns.example/dns-query?key=doh-token',
      NETDIAG_REDIS_URL: 'redis://:redis-pass@127.0.0.1:6390/0',
      NETDIAG_RATE_LIMIT_KEY: 'rate-limit-secret-0123456789abcdefghijklmnop',
      NETDIAG_PROBES: 'weur=http://127.0.0.1:9/rtt-base',
      NETDIAG_METRICS_PORT: '9464',
    });
    const summary = configurationSummary(config, 1);
    expect(summary).toEqual({
      // PORT=0: the line states the port asked for; the `listening` line says which it got.
      listeners: { api: 'http://127.0.0.1:0', tls: false, proxy_protocol: false, metrics: 'http://127.0.0.1:9464/metrics' },
      public_url: null,
      trust_proxy: 'loopback',
      trust_proxy_header: 'x-forwarded-for',
      dns_upstream: 'https://dns.example/dns-query',
      events_sink: 'https://collector.example/ingest',
      limiter: 'redis redis://127.0.0.1:6390/0',
      workers: 1,
      probes: { weur: 'http://127.0.0.1:9/rtt-base' },
      geo: { city: 'embedded DB-IP Lite city', asn: 'embedded ASN table' },
      speedtest_targets: true,
      turn: null,
      family_origins: { ipv4: null, ipv6: null },
      access_log: false,
    });
    const text = JSON.stringify(summary);
    for (const secret of ['collector-pass', 'collector-user', 'sink-token', 'doh-token', 'redis-pass', 'rate-limit-secret']) expect(text).not.toContain(secret);
  });

  it('names a udp upstream with its sockets, and the limiter the worker threads share', () => {
    const config = loadConfig({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:5353' });
    expect(configurationSummary(config, 4)).toMatchObject({
      dns_upstream: 'udp://127.0.0.1:5353',
      dns_udp_sockets: 'shared',
      limiter: 'in-process, one table shared by the worker threads',
      workers: 4,
    });
  });
});
