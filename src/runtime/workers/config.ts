import { ConfigError, collectorUrl, probeUrl, regionEntries, dnsBounds, eventsQueueSize, fail, logLevel, onOff, parseUrl, parsedWith, publicUrl, read, secretKey, MAKE_A_KEY, type DnsBounds, type Env, type LogLevel } from '../../config/vars.js';
import type { RegionId } from '../../latency/regions.js';
import { DEFAULT_LIMITS, parseLimits, type Limits, type Operation } from '../../ratelimit/limits.js';
import { varsOf, type WorkerEnv } from './env.js';

export type WorkersProbe = { kind: 'durable-object' } | { kind: 'url'; url: string };

export type WorkersEventsSink =
  | { kind: 'log' }
  | { kind: 'none' }
  | { kind: 'analytics-engine' }
  | { kind: 'http'; url: string; authorization: string | undefined };

export type LimiterKind = 'durable-object' | 'binding';

export interface WorkersConfig extends DnsBounds {
  publicUrl: string | undefined;
  /** The one fixed resolver, over DoH (Workers have no UDP, and no TCP to Cloudflare's ranges). */
  dohUrl: string;
  limits: Limits;
  limiter: LimiterKind;
  rateLimitKey: string;
  probes: ReadonlyMap<RegionId, WorkersProbe>;
  eventsSink: WorkersEventsSink;
  eventsQueueSize: number;
  logLevel: LogLevel;
  accessLog: boolean;
  speedTestTargets: boolean;
}

/** The DoH default: a host name, since production Workers cannot fetch an IP-literal URL. */
export const WORKERS_DOH_DEFAULT = 'https://cloudflare-dns.com/dns-query';

/** The DNS cache's default bound on Workers (Node's is 64 MiB). */
export const WORKERS_DNS_CACHE_BYTES = 8 * 1024 * 1024;

/** The one binding per operation that `NETDIAG_LIMITER=binding` needs. */
export const LIMIT_BINDINGS: Readonly<Record<Operation, 'IP_RATE_LIMIT' | 'DNS_RATE_LIMIT' | 'PROBE_RATE_LIMIT' | 'EVENTS_RATE_LIMIT' | 'SPEEDTEST_RATE_LIMIT'>> = {
  ip: 'IP_RATE_LIMIT',
  dns: 'DNS_RATE_LIMIT',
  probe: 'PROBE_RATE_LIMIT',
  events: 'EVENTS_RATE_LIMIT',
  speedtest: 'SPEEDTEST_RATE_LIMIT',
};

const LOOPBACK_HOST = /^(?:localhost|127(?:\.[0-9]{1,3}){3}|\[::1\])$/;
const IP_LITERAL = /^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\[[0-9a-fA-F:.]+\])$/;

/**
 * `NETDIAG_DNS_UPSTREAM` on Workers: an https:// DoH URL naming a host. An IP literal cannot be
 * fetched in production and plain http would send every question in clear, so both are refused,
 * except on loopback, which only exists in local development and tests (wrangler dev, workerd).
 */
function dohUrl(env: Env): string {
  const name = 'NETDIAG_DNS_UPSTREAM';
  const value = read(env, name) ?? WORKERS_DOH_DEFAULT;
  const url = parseUrl(name, value, ['https:', 'http:']);
  const loopback = LOOPBACK_HOST.test(url.hostname);
  if (url.protocol === 'http:' && !loopback) fail(name, `"${value}" must be an https:// DoH URL (plain http only to loopback, for local development)`);
  if (IP_LITERAL.test(url.hostname) && !loopback) {
    fail(name, `"${value}" names an IP address, which Workers cannot fetch: use a host name, such as ${WORKERS_DOH_DEFAULT}`);
  }
  if (url.username !== '' || url.password !== '') fail(name, 'must not carry credentials');
  return url.href;
}

/**
 * `NETDIAG_PROBES` on Workers: `region=durable-object` (a Durable Object placed by the region's
 * location hint) or `region=https://…` (a `netdiag probe` running in that region), comma-separated.
 * One `apac` hint cannot stand for two regions (SPEC-NOTES, Latency): the operator names the one
 * it serves, and the other may only be a URL probe.
 */
function probes(env: Env): Map<RegionId, WorkersProbe> {
  const result = regionEntries<WorkersProbe>(env, 'region=durable-object or region=url', (region, target) =>
    target === 'durable-object' ? { kind: 'durable-object' } : { kind: 'url', url: probeUrl(region, target) },
  );
  if (result.get('apac-ne')?.kind === 'durable-object' && result.get('apac-se')?.kind === 'durable-object') {
    fail('NETDIAG_PROBES', 'apac-ne and apac-se cannot both be durable-object: one "apac" location hint serves one of them; give the other a URL probe');
  }
  return result;
}

function eventsSink(env: Env): WorkersEventsSink {
  const name = 'NETDIAG_EVENTS_SINK';
  const value = read(env, name) ?? 'log';
  if (value === 'log' || value === 'none' || value === 'analytics-engine') return { kind: value };
  if (/^https?:/.test(value)) return { kind: 'http', ...collectorUrl(name, value) };
  return fail(name, `"${value}" must be log, none, analytics-engine or an http(s):// URL`);
}

function limiterKind(env: Env): LimiterKind {
  const value = read(env, 'NETDIAG_LIMITER') ?? 'durable-object';
  if (value !== 'durable-object' && value !== 'binding') fail('NETDIAG_LIMITER', `must be durable-object or binding, got "${value}"`);
  return value;
}

/** A binding the configuration relies on must exist: a missing one is named, never skipped. */
function requireBinding(env: WorkerEnv, binding: string, variable: string, why: string): void {
  if (env[binding] === undefined) fail(variable, `${why} needs the ${binding} binding, which this Worker does not have (wrangler.jsonc)`);
}

/**
 * Reads and validates the Worker's vars and checks the bindings they name (the same variable
 * names and messages as on Node where they apply). Throws ConfigError.
 */
export function loadWorkersConfig(env: WorkerEnv): WorkersConfig {
  const vars = varsOf(env);
  // Isolates of one deployment (and its Durable Objects) must hash a source alike, or one
  // caller's hits would land on many counters: the key is required here, on every limiter.
  const rateLimitKey = secretKey(vars);
  if (rateLimitKey === undefined) fail('NETDIAG_RATE_LIMIT_KEY', `is required on Workers (a secret: wrangler secret put NETDIAG_RATE_LIMIT_KEY); ${MAKE_A_KEY}`);
  const config: WorkersConfig = {
    publicUrl: publicUrl(vars),
    dohUrl: dohUrl(vars),
    ...dnsBounds(vars),
    // An isolate has 128 MB for everything: the cache gets a sixteenth unless the operator says.
    ...(read(vars, 'NETDIAG_DNS_CACHE_BYTES') === undefined ? { dnsCacheBytes: WORKERS_DNS_CACHE_BYTES } : {}),
    limits: parsedWith(vars, 'NETDIAG_RATE_LIMITS', parseLimits, DEFAULT_LIMITS),
    limiter: limiterKind(vars),
    rateLimitKey,
    probes: probes(vars),
    eventsSink: eventsSink(vars),
    eventsQueueSize: eventsQueueSize(vars),
    logLevel: logLevel(vars),
    accessLog: onOff(vars, 'NETDIAG_ACCESS_LOG', false),
    speedTestTargets: onOff(vars, 'NETDIAG_SPEEDTEST_TARGETS', true),
  };
  if (config.limiter === 'durable-object') requireBinding(env, 'RATE_LIMITER', 'NETDIAG_LIMITER', 'durable-object');
  else for (const binding of Object.values(LIMIT_BINDINGS)) requireBinding(env, binding, 'NETDIAG_LIMITER', 'binding');
  if ([...config.probes.values()].some((p) => p.kind === 'durable-object')) requireBinding(env, 'REGION_PROBE', 'NETDIAG_PROBES', 'a durable-object probe');
  if (config.eventsSink.kind === 'analytics-engine') requireBinding(env, 'ANALYTICS', 'NETDIAG_EVENTS_SINK', 'analytics-engine');
  return config;
}

export { ConfigError };
