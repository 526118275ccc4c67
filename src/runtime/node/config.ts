import { accessSync, constants, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { TRUSTED_HEADERS, isTrustedHeader, type TrustedHeader } from '../../ip/caller-address.js';
import { TRUST_NONE, parseTrustList, type TrustPolicy } from '../../ip/trust.js';
import type { RegionId } from '../../latency/regions.js';
import { DEFAULT_LIMITS, parseLimits, type Limits } from '../../ratelimit/limits.js';
import { ConfigError, MAKE_A_KEY, probeUrl, regionEntries, collectorUrl, dnsBounds, eventsQueueSize, fail, logLevel, onOff, parseUrl, parsedWith, publicUrl, read, secretKey, wholeNumber, type DnsBounds, type Env, type LogLevel } from '../../config/vars.js';

export { ConfigError, type Env, type LogLevel };

export type DnsUpstream =
  | { protocol: 'udp'; host: string; port: number; text: string; sockets: UdpSockets }
  | { protocol: 'tcp'; host: string; port: number; text: string }
  | { protocol: 'https'; url: string; text: string };

/**
 * `authorization` holds credentials given in the collector URL, sent as HTTP Basic
 * authentication (RFC 7617): fetch refuses a URL with credentials, and the URL is logged.
 */
export type EventsSink = { kind: 'log' } | { kind: 'none' } | { kind: 'http'; url: string; authorization: string | undefined };

export interface Config extends DnsBounds {
  port: number;
  host: string | undefined;
  publicUrl: string | undefined;
  dnsUpstream: DnsUpstream;
  trust: TrustPolicy;
  /** `NETDIAG_TRUST_PROXY` as given (`none` when unset), for the start-up configuration line. */
  trustText: string;
  trustHeader: TrustedHeader;
  proxyProtocol: boolean;
  colo: string | null;
  geoipCity: string | undefined;
  geoipAsn: string | undefined;
  limits: Limits;
  redisUrl: string | undefined;
  /** Secret for the keyed hash of rate-limit sources, shared by every instance of a deployment. */
  rateLimitKey: string | undefined;
  workers: number | 'auto';
  probes: ReadonlyMap<RegionId, string>;
  eventsSink: EventsSink;
  /** Most events the HTTP sink holds while its collector is slow or down. */
  eventsQueueSize: number;
  tls: { cert: Buffer; key: Buffer } | undefined;
  /** Bounds every listener enforces on a client (plain, TLS HTTP/1.1, HTTP/2, PROXY front). */
  timeouts: ListenerTimeouts;
  logLevel: LogLevel;
  accessLog: boolean;
  speedTestTargets: boolean;
  /** The Prometheus listener (`NETDIAG_METRICS_PORT`, `NETDIAG_METRICS_HOST`); off when undefined. */
  metrics: { port: number; host: string } | undefined;
}

export interface ListenerTimeouts {
  /** Time to receive a request's whole header block (and a PROXY header, and a TLS handshake). */
  headersMs: number;
  /** Time to receive a whole request, body included. */
  requestMs: number;
  /** How long an idle keep-alive connection (or an HTTP/2 session with no stream) is held. */
  keepAliveMs: number;
}

function timeouts(env: Env): ListenerTimeouts {
  const headersMs = wholeNumber(env, 'NETDIAG_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestMs = wholeNumber(env, 'NETDIAG_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // Node refuses a request deadline shorter than the header deadline (it would never apply).
  if (requestMs < headersMs) fail('NETDIAG_REQUEST_TIMEOUT_MS', `must be at least NETDIAG_HEADERS_TIMEOUT_MS (${headersMs}), got ${requestMs}`);
  return { headersMs, requestMs, keepAliveMs: wholeNumber(env, 'NETDIAG_KEEPALIVE_TIMEOUT_MS', 5_000, 100, 600_000) };
}

function hostPort(name: string, authority: string, defaultPort: number): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::([0-9]{1,5}))?$/.exec(authority);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || isIP(host) === 0) {
    fail(name, `"${authority}" must be an IP address (IPv6 in brackets) with an optional port`);
  }
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65535) fail(name, `port ${port} is out of range`);
  return { host, port };
}

/**
 * `per-query`: a socket (and a fresh source port) per query, RFC 5452 §4.5. `shared`: a few
 * long-lived sockets, for an upstream on a trusted path (dns-udp-shared.ts says what is traded).
 */
export type UdpSockets = 'per-query' | 'shared';

/** Loopback is the one path no off-path host can inject into: Linux drops loopback sources arriving elsewhere. */
function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.');
}

/** `NETDIAG_DNS_UDP_SOCKETS` for a udp:// upstream at `host`; set with any other upstream, it is an error. */
function udpSockets(env: Env, host: string): UdpSockets {
  const name = 'NETDIAG_DNS_UDP_SOCKETS';
  const value = read(env, name);
  if (value === undefined) return isLoopback(host) ? 'shared' : 'per-query';
  if (value !== 'per-query' && value !== 'shared') fail(name, `must be per-query or shared, got "${value}"`);
  return value;
}

function dnsUpstream(env: Env): DnsUpstream {
  const name = 'NETDIAG_DNS_UPSTREAM';
  const value = read(env, name) ?? 'https://1.1.1.1/dns-query';
  const scheme = /^([a-z]+):\/\/(.*)$/.exec(value);
  if (scheme?.[1] === 'udp') {
    const { host, port } = hostPort(name, scheme[2] ?? '', 53);
    return { protocol: 'udp', host, port, text: value, sockets: udpSockets(env, host) };
  }
  if (read(env, 'NETDIAG_DNS_UDP_SOCKETS') !== undefined) fail('NETDIAG_DNS_UDP_SOCKETS', 'applies only to a udp:// NETDIAG_DNS_UPSTREAM');
  if (scheme?.[1] === 'tcp') {
    const { host, port } = hostPort(name, scheme[2] ?? '', 53);
    return { protocol: 'tcp', host, port, text: value };
  }
  if (scheme?.[1] === 'https') {
    const url = parseUrl(name, value, ['https:']);
    if (url.username !== '' || url.password !== '') fail(name, 'must not carry credentials');
    return { protocol: 'https', url: url.href, text: value };
  }
  return fail(name, `"${value}" must be udp://IP[:port], tcp://IP[:port] or an https:// DoH URL`);
}

function readableFile(name: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    return fail(name, `cannot read "${path}" (${code})`);
  }
}

function geoPath(env: Env, name: string): string | undefined {
  const path = read(env, name);
  if (path === undefined) return undefined;
  // Only check that it can be read: the geo loader reads it once, at start-up, and checks its format.
  try {
    accessSync(path, constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    fail(name, `cannot read "${path}" (${code})`);
  }
  return path;
}

function probes(env: Env): Map<RegionId, string> {
  return regionEntries(env, 'region=url', probeUrl);
}

function eventsSink(env: Env): EventsSink {
  const name = 'NETDIAG_EVENTS_SINK';
  const value = read(env, name) ?? 'log';
  if (value === 'log' || value === 'none') return { kind: value };
  if (/^https?:/.test(value)) return { kind: 'http', ...collectorUrl(name, value) };
  return fail(name, `"${value}" must be log, none or an http(s):// URL`);
}

function tls(env: Env): Config['tls'] {
  const certPath = read(env, 'NETDIAG_TLS_CERT');
  const keyPath = read(env, 'NETDIAG_TLS_KEY');
  if (certPath === undefined && keyPath === undefined) return undefined;
  if (certPath === undefined) fail('NETDIAG_TLS_CERT', 'must be set when NETDIAG_TLS_KEY is');
  if (keyPath === undefined) fail('NETDIAG_TLS_KEY', 'must be set when NETDIAG_TLS_CERT is');
  const cert = readableFile('NETDIAG_TLS_CERT', certPath);
  const key = readableFile('NETDIAG_TLS_KEY', keyPath);
  try {
    createSecureContext({ cert, key });
  } catch {
    fail('NETDIAG_TLS_KEY', 'the key and certificate are not a valid PEM pair');
  }
  return { cert, key };
}

/**
 * With Redis the key is required (SPEC-NOTES, Rate limits): a key generated and kept in Redis
 * would sit beside the hashes it keys, and the whole IPv4 space can be tried against them.
 */
function rateLimitKey(env: Env, redisUrl: string | undefined): string | undefined {
  const key = secretKey(env);
  if (key === undefined && redisUrl !== undefined) fail('NETDIAG_RATE_LIMIT_KEY', `is required with NETDIAG_REDIS_URL: ${MAKE_A_KEY}`);
  return key;
}

function trustHeader(env: Env): TrustedHeader {
  const name = 'NETDIAG_TRUST_PROXY_HEADER';
  const value = (read(env, name) ?? 'x-forwarded-for').toLowerCase();
  if (!isTrustedHeader(value)) fail(name, `must be one of ${TRUSTED_HEADERS.join(', ')}, got "${value}"`);
  return value;
}

function listenHost(env: Env, name = 'HOST'): string | undefined {
  const host = read(env, name);
  if (host !== undefined && isIP(host) === 0 && !/^[a-zA-Z0-9.-]{1,253}$/.test(host)) {
    fail(name, `"${host}" is not an IP address or host name`);
  }
  return host;
}

/**
 * The metrics listener: off unless NETDIAG_METRICS_PORT is set; on loopback unless
 * NETDIAG_METRICS_HOST says otherwise, since what it shows is for the operator's scraper only.
 */
function metricsListener(env: Env, apiPort: number): Config['metrics'] {
  if (read(env, 'NETDIAG_METRICS_PORT') === undefined) {
    if (read(env, 'NETDIAG_METRICS_HOST') !== undefined) fail('NETDIAG_METRICS_HOST', 'has no effect without NETDIAG_METRICS_PORT');
    return undefined;
  }
  const port = wholeNumber(env, 'NETDIAG_METRICS_PORT', 0, 0, 65535);
  if (port !== 0 && port === apiPort) fail('NETDIAG_METRICS_PORT', `must differ from PORT (${String(apiPort)})`);
  return { port, host: listenHost(env, 'NETDIAG_METRICS_HOST') ?? '127.0.0.1' };
}

/** What `netdiag probe` reads: where to listen, TLS and logging; nothing else applies to it. */
export interface ProbeConfig {
  port: number;
  host: string | undefined;
  tls: Config['tls'];
  timeouts: ListenerTimeouts;
  logLevel: LogLevel;
}

export function loadProbeConfig(env: Env): ProbeConfig {
  return {
    port: wholeNumber(env, 'PORT', 8081, 0, 65535),
    host: listenHost(env),
    tls: tls(env),
    timeouts: timeouts(env),
    logLevel: logLevel(env),
  };
}

/** Reads and validates every variable (SPEC-NOTES, operator interface). Throws ConfigError. */
export function loadConfig(env: Env, defaults: { port: number } = { port: 8080 }): Config {
  const host = listenHost(env);

  const trust = parsedWith(env, 'NETDIAG_TRUST_PROXY', parseTrustList, TRUST_NONE);

  const proxyValue = read(env, 'NETDIAG_PROXY_PROTOCOL') ?? 'off';
  if (proxyValue !== 'on' && proxyValue !== 'off') fail('NETDIAG_PROXY_PROTOCOL', `must be on or off, got "${proxyValue}"`);
  if (proxyValue === 'on' && !trust.any) {
    fail('NETDIAG_PROXY_PROTOCOL', 'is on, but NETDIAG_TRUST_PROXY names no peer to accept it from');
  }

  const colo = read(env, 'NETDIAG_COLO') ?? null;
  if (colo !== null && !/^[A-Z]{3}$/.test(colo)) fail('NETDIAG_COLO', `must be three capital letters, got "${colo}"`);

  const limits = parsedWith(env, 'NETDIAG_RATE_LIMITS', parseLimits, DEFAULT_LIMITS);

  const redisValue = read(env, 'NETDIAG_REDIS_URL');
  const redisUrl = redisValue === undefined ? undefined : parseUrl('NETDIAG_REDIS_URL', redisValue, ['redis:', 'rediss:']).href;

  const workersValue = read(env, 'NETDIAG_WORKERS');
  const workers = workersValue === 'auto' ? 'auto' : wholeNumber(env, 'NETDIAG_WORKERS', 1, 1, 256);

  const accessValue = read(env, 'NETDIAG_ACCESS_LOG') ?? 'off';
  if (accessValue !== 'on' && accessValue !== 'off') fail('NETDIAG_ACCESS_LOG', `must be on or off, got "${accessValue}"`);

  const port = wholeNumber(env, 'PORT', defaults.port, 0, 65535);
  return {
    port,
    host,
    publicUrl: publicUrl(env),
    dnsUpstream: dnsUpstream(env),
    ...dnsBounds(env),
    trust,
    trustText: read(env, 'NETDIAG_TRUST_PROXY') ?? 'none',
    trustHeader: trustHeader(env),
    proxyProtocol: proxyValue === 'on',
    colo,
    geoipCity: geoPath(env, 'NETDIAG_GEOIP_CITY'),
    geoipAsn: geoPath(env, 'NETDIAG_GEOIP_ASN'),
    limits,
    redisUrl,
    rateLimitKey: rateLimitKey(env, redisUrl),
    workers,
    probes: probes(env),
    eventsSink: eventsSink(env),
    eventsQueueSize: eventsQueueSize(env),
    tls: tls(env),
    timeouts: timeouts(env),
    logLevel: logLevel(env),
    accessLog: onOff(env, 'NETDIAG_ACCESS_LOG', false),
    speedTestTargets: onOff(env, 'NETDIAG_SPEEDTEST_TARGETS', true),
    metrics: metricsListener(env, port),
  };
}
