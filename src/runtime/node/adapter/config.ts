// `netdiag serve`'s and `netdiag probe`'s configuration from the environment (docs/api.md,
// operator interface): a table per program (one row per variable: parser and bounds, default,
// description), read in order; then the checks that span variables; then the one step with I/O,
// reading the files variables name (TLS certificate and key, geo databases).
import { DEFAULT_TRANSFER_LIMITS, type TransferLimits } from '../../../core/http/transfers.js';
import { accessSync, constants, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext } from 'node:tls';
import { MAKE_A_KEY, bounded, collectorUrl, either, onOff, probeUrl, regionPairs, url, wholeNumber, type LogLevel } from '../../../core/config/parsers.js';
import { ConfigError, fail, invalid, readTable, variable, type Env, type Parser, type Values } from '../../../core/config/table.js';
import { SHARED, SHARED_FEATURES, dnsBounds, familyOrigins, turnSettings, type DnsBounds, type FamilyOrigins, type TurnSettings } from '../../../core/config/vars.js';
import type { ListedServer } from '../../../common/servers.js';
import { TRUSTED_HEADERS, isTrustedHeader, type TrustedHeader } from '../../../core/net/caller-address.js';
import { TRUST_NONE, parseTrustList, type TrustPolicy } from '../../../core/net/trust.js';
import { isRegionId, type RegionId } from '../../../common/regions.js';
import type { Limits } from '../../../core/ratelimit/limits.js';

export { ConfigError, type Env, type LogLevel };

type DnsUpstream =
  | { protocol: 'udp'; host: string; port: number; text: string; sockets: UdpSockets }
  | { protocol: 'tcp'; host: string; port: number; text: string }
  | { protocol: 'https'; url: string; text: string };

/** An upstream as `NETDIAG_DNS_UPSTREAM` names it, before `NETDIAG_DNS_UDP_SOCKETS` applies. */
type UpstreamAddress =
  | { protocol: 'udp'; host: string; port: number; text: string }
  | { protocol: 'tcp'; host: string; port: number; text: string }
  | { protocol: 'https'; url: string; text: string };

/**
 * `per-query`: a socket (and a fresh source port) per query, RFC 5452 §4.5. `shared`: a few
 * long-lived sockets, for an upstream on a trusted path (dns/udp-shared.ts says what is traded).
 */
type UdpSockets = 'per-query' | 'shared';

/**
 * `authorization` holds credentials given in the collector URL, sent as HTTP Basic
 * authentication (RFC 7617): fetch refuses a URL with credentials, and the URL is logged.
 */
type EventsSink = { kind: 'log' } | { kind: 'none' } | { kind: 'http'; url: string; authorization: string | undefined };

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
  /** What one source may hold of the speed-test and responsiveness transfers (`NETDIAG_TRANSFERS_AT_ONCE`, `NETDIAG_TRANSFER_BYTES_PER_MINUTE`). */
  transfers: TransferLimits;
  /** Whether /port/N connects to callers (`NETDIAG_PORT_CHECK`). */
  portCheck: boolean;
  /** Whether `?ip=` and the DNS route ask about special-use reverse zones (`NETDIAG_IP_PARAM_SPECIAL_PTR`). */
  specialUsePtr: boolean;
  /** The TURN server credentials are minted for (`NETDIAG_TURN_*`), if any. */
  turn: TurnSettings | undefined;
  /** The deployment's single-family origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), for the dual-stack check. */
  families: FamilyOrigins;
  /** The operator's deployments (`NETDIAG_SERVERS`), served at /v1/servers. */
  servers: ListedServer[];
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
  /**
   * How long a connection, or an HTTP/2 stream, may make no progress, reading or writing, before
   * it is closed: a download whose client stopped reading holds the host's socket memory until it is.
   */
  stallMs: number;
}

// ---- Parsers for what only Node reads (pure: text in, meaning out, or an Error saying why).

const listenHost: Parser<string> = (text) => {
  if (isIP(text) === 0 && !/^[a-zA-Z0-9.-]{1,253}$/.test(text)) invalid(`"${text}" is not an IP address or host name`);
  return text;
};

function hostPort(authority: string, defaultPort: number): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::([0-9]{1,5}))?$/.exec(authority);
  const host = match?.[1] ?? match?.[2];
  if (match === null || host === undefined || isIP(host) === 0) {
    invalid(`"${authority}" must be an IP address (IPv6 in brackets) with an optional port`);
  }
  const port = match[3] === undefined ? defaultPort : Number(match[3]);
  if (port < 1 || port > 65535) invalid(`port ${port} is out of range`);
  return { host, port };
}

const dnsUpstream: Parser<UpstreamAddress> = (text) => {
  const scheme = /^([a-z]+):\/\/(.*)$/.exec(text);
  if (scheme?.[1] === 'udp' || scheme?.[1] === 'tcp') return { protocol: scheme[1], ...hostPort(scheme[2] ?? '', 53), text };
  if (scheme?.[1] === 'https') {
    const parsed = url(text, ['https:']);
    if (parsed.username !== '' || parsed.password !== '') invalid('must not carry credentials');
    return { protocol: 'https', url: parsed.href, text };
  }
  return invalid(`"${text}" must be udp://IP[:port], tcp://IP[:port] or an https:// DoH URL`);
};

/** The policy, and the text as given for the start-up configuration line. */
const trustList: Parser<{ policy: TrustPolicy; text: string }> = (text) => ({ policy: parseTrustList(text), text });

const trustHeader: Parser<TrustedHeader> = (text) => {
  const value = text.toLowerCase();
  if (!isTrustedHeader(value)) invalid(`must be one of ${TRUSTED_HEADERS.join(', ')}, got "${value}"`);
  return value;
};

const colo: Parser<string> = (text) => {
  if (!/^[A-Z]{3}$/.test(text)) invalid(`must be three capital letters, got "${text}"`);
  return text;
};

/** A path to a file the last step of loading reads (or checks it can read). */
const path: Parser<string> = (text) => text;

const WORKER_COUNT = wholeNumber(1, 256);
const workerCount: Parser<number | 'auto'> = bounded((text) => (text === 'auto' ? 'auto' : WORKER_COUNT(text)), { min: 1, max: 256 });

const eventsSink: Parser<EventsSink> = (text) => {
  if (text === 'log' || text === 'none') return { kind: text };
  if (/^https?:/.test(text)) return { kind: 'http', ...collectorUrl(text) };
  return invalid(`"${text}" must be log, none or an http(s):// URL`);
};

const PORT = variable({ about: 'listen port; 0 picks a free one', parse: wholeNumber(0, 65535), default: 8080 });

/**
 * Every variable `netdiag serve` reads, in the order they are read: the first bad one is named.
 * README.md's configuration table lists exactly these (src/runtime/node/adapter/config.test.ts checks).
 */
export const SERVE_VARIABLES = {
  PORT,
  HOST: variable<string | undefined>({ about: 'listen address; all interfaces when unset', parse: listenHost, default: undefined }),
  NETDIAG_PUBLIC_URL: SHARED.NETDIAG_PUBLIC_URL,
  NETDIAG_DNS_UPSTREAM: variable({ about: 'the one resolver: udp://IP[:port], tcp://IP[:port] or an https:// DoH URL', parse: dnsUpstream, default: dnsUpstream('https://1.1.1.1/dns-query') }),
  NETDIAG_DNS_UDP_SOCKETS: variable<UdpSockets | undefined>({
    about: 'with a udp:// upstream: a socket per query, or a few shared ones (shared for loopback when unset)',
    parse: either('per-query', 'shared'),
    default: undefined,
  }),
  NETDIAG_DNS_TIMEOUT_MS: SHARED.NETDIAG_DNS_TIMEOUT_MS,
  NETDIAG_DNS_CACHE_SIZE: SHARED.NETDIAG_DNS_CACHE_SIZE,
  NETDIAG_DNS_CACHE_BYTES: SHARED.NETDIAG_DNS_CACHE_BYTES,
  NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: SHARED.NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES,
  NETDIAG_DNS_MAX_OUTSTANDING: SHARED.NETDIAG_DNS_MAX_OUTSTANDING,
  NETDIAG_TRUST_PROXY: variable({ about: 'CIDRs, addresses or loopback whose forwarding header is trusted', parse: trustList, default: { policy: TRUST_NONE, text: 'none' } }),
  NETDIAG_TRUST_PROXY_HEADER: variable<TrustedHeader>({ about: 'the one header the trusted proxy writes', parse: trustHeader, default: 'x-forwarded-for' }),
  NETDIAG_PROXY_PROTOCOL: variable({ about: 'on: a PROXY protocol header from NETDIAG_TRUST_PROXY peers', parse: onOff, default: false }),
  NETDIAG_COLO: variable<string | null>({ about: "this node's location code", parse: colo, default: null }),
  NETDIAG_GEOIP_CITY: variable<string | undefined>({ about: 'a MaxMind City .mmdb replacing the embedded data', parse: path, default: undefined }),
  NETDIAG_GEOIP_ASN: variable<string | undefined>({ about: 'a MaxMind ASN .mmdb replacing the embedded data', parse: path, default: undefined }),
  NETDIAG_RATE_LIMITS: SHARED.NETDIAG_RATE_LIMITS,
  ...SHARED_FEATURES,
  NETDIAG_REDIS_URL: variable<string | undefined>({ about: 'a shared rate-limit store: redis:// or rediss://', parse: (text) => url(text, ['redis:', 'rediss:']).href, default: undefined }),
  NETDIAG_PORT_CHECK: variable({ about: "on: /port/N connects to the caller's own address on port N", parse: onOff, default: false }),
  NETDIAG_IP_PARAM_SPECIAL_PTR: variable({ about: "on: ?ip= and /v1/dns/resolve also ask about special-use reverse zones (the operator's private ones)", parse: onOff, default: false }),
  NETDIAG_WORKERS: variable({ about: 'server threads on one port, or auto (one per core)', parse: workerCount, default: 1 }),
  NETDIAG_RATE_LIMIT_KEY: SHARED.NETDIAG_RATE_LIMIT_KEY,
  NETDIAG_PROBES: variable({ about: 'region=url pairs, comma-separated', parse: regionPairs(isRegionId, 'region=url', probeUrl), default: new Map<RegionId, string>() }),
  NETDIAG_EVENTS_SINK: variable<EventsSink>({ about: 'log, none, or an http(s):// collector URL', parse: eventsSink, default: { kind: 'log' } }),
  NETDIAG_EVENTS_QUEUE: SHARED.NETDIAG_EVENTS_QUEUE,
  NETDIAG_TLS_CERT: variable<string | undefined>({ about: 'PEM certificate: serve HTTPS (with NETDIAG_TLS_KEY)', parse: path, default: undefined }),
  NETDIAG_TLS_KEY: variable<string | undefined>({ about: 'PEM key: serve HTTPS (with NETDIAG_TLS_CERT)', parse: path, default: undefined }),
  NETDIAG_HEADERS_TIMEOUT_MS: variable({ about: "time for a request's header block, a PROXY header, a TLS handshake", parse: wholeNumber(100, 600_000), default: 10_000 }),
  NETDIAG_REQUEST_TIMEOUT_MS: variable({ about: 'time for a whole request, body included', parse: wholeNumber(100, 3_600_000), default: 30_000 }),
  NETDIAG_KEEPALIVE_TIMEOUT_MS: variable({ about: 'how long an idle connection is held', parse: wholeNumber(100, 600_000), default: 5_000 }),
  NETDIAG_TRANSFERS_AT_ONCE: variable({ about: 'speed-test and responsiveness transfers one source may have open at once', parse: wholeNumber(1, 1_000_000), default: DEFAULT_TRANSFER_LIMITS.atOnce }),
  NETDIAG_TRANSFER_BYTES_PER_MINUTE: variable({ about: 'bytes one source may move through those transfers in a minute before new ones are refused', parse: wholeNumber(1_000_000, 1_000_000_000_000_000), default: DEFAULT_TRANSFER_LIMITS.bytesPerMinute }),
  NETDIAG_STALL_TIMEOUT_MS: variable({ about: 'how long a connection or HTTP/2 stream may move nothing, either way, before it is closed', parse: wholeNumber(1_000, 600_000), default: 20_000 }),
  NETDIAG_LOG_LEVEL: SHARED.NETDIAG_LOG_LEVEL,
  NETDIAG_ACCESS_LOG: SHARED.NETDIAG_ACCESS_LOG,
  NETDIAG_METRICS_PORT: variable<number | undefined>({ about: 'a second listener serving GET /metrics; off when unset', parse: wholeNumber(0, 65535), default: undefined }),
  NETDIAG_METRICS_HOST: variable<string | undefined>({ about: "the metrics listener's address (127.0.0.1 when unset)", parse: listenHost, default: undefined }),
};

/** What `netdiag probe` reads: where to listen, TLS and logging; nothing else applies to it. */
export const PROBE_VARIABLES = {
  PORT: { ...PORT, default: 8081 },
  HOST: SERVE_VARIABLES.HOST,
  NETDIAG_TLS_CERT: SERVE_VARIABLES.NETDIAG_TLS_CERT,
  NETDIAG_TLS_KEY: SERVE_VARIABLES.NETDIAG_TLS_KEY,
  NETDIAG_HEADERS_TIMEOUT_MS: SERVE_VARIABLES.NETDIAG_HEADERS_TIMEOUT_MS,
  NETDIAG_REQUEST_TIMEOUT_MS: SERVE_VARIABLES.NETDIAG_REQUEST_TIMEOUT_MS,
  NETDIAG_KEEPALIVE_TIMEOUT_MS: SERVE_VARIABLES.NETDIAG_KEEPALIVE_TIMEOUT_MS,
  NETDIAG_STALL_TIMEOUT_MS: SERVE_VARIABLES.NETDIAG_STALL_TIMEOUT_MS,
  NETDIAG_LOG_LEVEL: SERVE_VARIABLES.NETDIAG_LOG_LEVEL,
};

// ---- Checks that span variables (after every variable has been read on its own).

/** Loopback is the one path no off-path host can inject into: Linux drops loopback sources arriving elsewhere. */
function isLoopback(host: string): boolean {
  return host === '::1' || host.startsWith('127.');
}

/** `NETDIAG_DNS_UDP_SOCKETS` applies to a udp:// upstream only; unset, loopback shares sockets. */
function withSockets(upstream: UpstreamAddress, sockets: UdpSockets | undefined): DnsUpstream {
  if (upstream.protocol === 'udp') return { ...upstream, sockets: sockets ?? (isLoopback(upstream.host) ? 'shared' : 'per-query') };
  if (sockets !== undefined) fail('NETDIAG_DNS_UDP_SOCKETS', 'applies only to a udp:// NETDIAG_DNS_UPSTREAM');
  return upstream;
}

type TimeoutValues = Pick<Values<typeof SERVE_VARIABLES>, 'NETDIAG_HEADERS_TIMEOUT_MS' | 'NETDIAG_REQUEST_TIMEOUT_MS' | 'NETDIAG_KEEPALIVE_TIMEOUT_MS' | 'NETDIAG_STALL_TIMEOUT_MS'>;

function timeouts(values: TimeoutValues): ListenerTimeouts {
  const headersMs = values.NETDIAG_HEADERS_TIMEOUT_MS;
  const requestMs = values.NETDIAG_REQUEST_TIMEOUT_MS;
  // Node refuses a request deadline shorter than the header deadline (it would never apply).
  if (requestMs < headersMs) fail('NETDIAG_REQUEST_TIMEOUT_MS', `must be at least NETDIAG_HEADERS_TIMEOUT_MS (${headersMs}), got ${requestMs}`);
  return { headersMs, requestMs, keepAliveMs: values.NETDIAG_KEEPALIVE_TIMEOUT_MS, stallMs: values.NETDIAG_STALL_TIMEOUT_MS };
}

type TlsPaths = { cert: string; key: string } | undefined;

function tlsPaths(values: Pick<Values<typeof SERVE_VARIABLES>, 'NETDIAG_TLS_CERT' | 'NETDIAG_TLS_KEY'>): TlsPaths {
  const cert = values.NETDIAG_TLS_CERT;
  const key = values.NETDIAG_TLS_KEY;
  if (cert === undefined && key === undefined) return undefined;
  if (cert === undefined) fail('NETDIAG_TLS_CERT', 'must be set when NETDIAG_TLS_KEY is');
  if (key === undefined) fail('NETDIAG_TLS_KEY', 'must be set when NETDIAG_TLS_CERT is');
  return { cert, key };
}

/**
 * With Redis the key is required (docs/api.md, "Rate limits"): a key generated and kept in Redis
 * would sit beside the hashes it keys, and the whole IPv4 space can be tried against them.
 */
function rateLimitKey(key: string | undefined, redisUrl: string | undefined): string | undefined {
  if (key === undefined && redisUrl !== undefined) fail('NETDIAG_RATE_LIMIT_KEY', `is required with NETDIAG_REDIS_URL: ${MAKE_A_KEY}`);
  return key;
}

/**
 * The metrics listener: off unless NETDIAG_METRICS_PORT is set; on loopback unless
 * NETDIAG_METRICS_HOST says otherwise, since what it shows is for the operator's scraper only.
 */
function metricsListener(port: number | undefined, host: string | undefined, apiPort: number): Config['metrics'] {
  if (port === undefined) {
    if (host !== undefined) fail('NETDIAG_METRICS_HOST', 'has no effect without NETDIAG_METRICS_PORT');
    return undefined;
  }
  if (port !== 0 && port === apiPort) fail('NETDIAG_METRICS_PORT', `must differ from PORT (${String(apiPort)})`);
  return { port, host: host ?? '127.0.0.1' };
}

// ---- The one step with I/O: the files variables name.

function readableFile(name: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    return fail(name, `cannot read "${file}" (${code})`);
  }
}

/** The certificate and key, read and checked to be a PEM pair. */
function readTls(paths: TlsPaths): Config['tls'] {
  if (paths === undefined) return undefined;
  const cert = readableFile('NETDIAG_TLS_CERT', paths.cert);
  const key = readableFile('NETDIAG_TLS_KEY', paths.key);
  try {
    createSecureContext({ cert, key });
  } catch {
    fail('NETDIAG_TLS_KEY', 'the key and certificate are not a valid PEM pair');
  }
  return { cert, key };
}

/** Only checks that it can be read: the geo loader reads it once, at start-up, and checks its format. */
function checkReadable(name: string, file: string | undefined): string | undefined {
  if (file === undefined) return undefined;
  try {
    accessSync(file, constants.R_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    fail(name, `cannot read "${file}" (${code})`);
  }
  return file;
}

// ---- Loading.

export interface ProbeConfig {
  port: number;
  host: string | undefined;
  tls: Config['tls'];
  timeouts: ListenerTimeouts;
  logLevel: LogLevel;
}

/** `netdiag probe`'s configuration (PROBE_VARIABLES). Throws ConfigError. */
export function loadProbeConfig(env: Env): ProbeConfig {
  const v = readTable(PROBE_VARIABLES, env);
  const listener = { timeouts: timeouts(v), tls: tlsPaths(v) };
  return { port: v.PORT, host: v.HOST, tls: readTls(listener.tls), timeouts: listener.timeouts, logLevel: v.NETDIAG_LOG_LEVEL };
}

/**
 * `netdiag serve`'s configuration (docs/operations.md, "Configuration in depth"): SERVE_VARIABLES read in
 * order, the checks that span variables, then the files they name. Throws ConfigError.
 */
export function loadConfig(env: Env): Config {
  const v = readTable(SERVE_VARIABLES, env);
  if (v.NETDIAG_PROXY_PROTOCOL && !v.NETDIAG_TRUST_PROXY.policy.any) {
    fail('NETDIAG_PROXY_PROTOCOL', 'is on, but NETDIAG_TRUST_PROXY names no peer to accept it from');
  }
  const settings = {
    port: v.PORT,
    host: v.HOST,
    publicUrl: v.NETDIAG_PUBLIC_URL,
    dnsUpstream: withSockets(v.NETDIAG_DNS_UPSTREAM, v.NETDIAG_DNS_UDP_SOCKETS),
    ...dnsBounds(v),
    trust: v.NETDIAG_TRUST_PROXY.policy,
    trustText: v.NETDIAG_TRUST_PROXY.text,
    trustHeader: v.NETDIAG_TRUST_PROXY_HEADER,
    proxyProtocol: v.NETDIAG_PROXY_PROTOCOL,
    colo: v.NETDIAG_COLO,
    limits: v.NETDIAG_RATE_LIMITS,
    redisUrl: v.NETDIAG_REDIS_URL,
    rateLimitKey: rateLimitKey(v.NETDIAG_RATE_LIMIT_KEY, v.NETDIAG_REDIS_URL),
    workers: v.NETDIAG_WORKERS,
    probes: v.NETDIAG_PROBES,
    eventsSink: v.NETDIAG_EVENTS_SINK,
    eventsQueueSize: v.NETDIAG_EVENTS_QUEUE,
    timeouts: timeouts(v),
    logLevel: v.NETDIAG_LOG_LEVEL,
    accessLog: v.NETDIAG_ACCESS_LOG,
    speedTestTargets: v.NETDIAG_SPEEDTEST_TARGETS,
    transfers: { atOnce: v.NETDIAG_TRANSFERS_AT_ONCE, bytesPerMinute: v.NETDIAG_TRANSFER_BYTES_PER_MINUTE },
    portCheck: v.NETDIAG_PORT_CHECK,
    specialUsePtr: v.NETDIAG_IP_PARAM_SPECIAL_PTR,
    turn: turnSettings(v),
    families: familyOrigins(v),
    servers: v.NETDIAG_SERVERS,
    metrics: metricsListener(v.NETDIAG_METRICS_PORT, v.NETDIAG_METRICS_HOST, v.PORT),
  };
  const tls = tlsPaths(v);
  return {
    ...settings,
    tls: readTls(tls),
    geoipCity: checkReadable('NETDIAG_GEOIP_CITY', v.NETDIAG_GEOIP_CITY),
    geoipAsn: checkReadable('NETDIAG_GEOIP_ASN', v.NETDIAG_GEOIP_ASN),
  };
}
