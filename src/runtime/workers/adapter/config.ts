import { MAKE_A_KEY, collectorUrl, either, probeUrl, regionPairs, url, type LogLevel } from '../../../core/config/parsers.js';
import { ConfigError, fail, invalid, readTable, variable, type Parser } from '../../../core/config/table.js';
import { SHARED, SHARED_FEATURES, dnsBounds, familyOrigins, turnSettings, type DnsBounds, type FamilyOrigins, type TurnSettings } from '../../../core/config/vars.js';
import type { ListedServer } from '../../../common/servers.js';
import { isRegionId, type RegionId } from '../../../common/regions.js';
import type { Limits } from '../../../core/ratelimit/limits.js';
import { varsOf, type WorkerEnv } from './env.js';
import type { Operation } from '../../../core/ports/limiter-store.js';

export type WorkersProbe = { kind: 'durable-object' } | { kind: 'url'; url: string };

type WorkersEventsSink =
  | { kind: 'log' }
  | { kind: 'none' }
  | { kind: 'analytics-engine' }
  | { kind: 'http'; url: string; authorization: string | undefined };

type LimiterKind = 'durable-object' | 'binding';

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
  /** The TURN server credentials are minted for (`NETDIAG_TURN_*`), if any. */
  turn: TurnSettings | undefined;
  /** The deployment's single-family origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), for the dual-stack check. */
  families: FamilyOrigins;
  /** The operator's deployments (`NETDIAG_SERVERS`), served at /v1/servers. */
  servers: ListedServer[];
}

/** The DoH default: a host name, since production Workers cannot fetch an IP-literal URL. */
export const WORKERS_DOH_DEFAULT = 'https://cloudflare-dns.com/dns-query';

/** The DNS cache's default bound on Workers (Node's is 64 MiB). */
export const WORKERS_DNS_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * The one binding per operation that `NETDIAG_LIMITER=binding` needs. None for `port`: the port
 * check is not served on Workers (its route answers 404 before any limit is counted).
 */
export const LIMIT_BINDINGS: Readonly<Record<BoundOperation, 'IP_RATE_LIMIT' | 'DNS_RATE_LIMIT' | 'PROBE_RATE_LIMIT' | 'EVENTS_RATE_LIMIT' | 'SPEEDTEST_RATE_LIMIT' | 'RPM_RATE_LIMIT' | 'TURN_RATE_LIMIT'>> = {
  ip: 'IP_RATE_LIMIT',
  dns: 'DNS_RATE_LIMIT',
  probe: 'PROBE_RATE_LIMIT',
  events: 'EVENTS_RATE_LIMIT',
  speedtest: 'SPEEDTEST_RATE_LIMIT',
  rpm: 'RPM_RATE_LIMIT',
  turn: 'TURN_RATE_LIMIT',
};

/** The operations Workers count: all but the port check's. */
export type BoundOperation = Exclude<Operation, 'port'>;

const LOOPBACK_HOST = /^(?:localhost|127(?:\.[0-9]{1,3}){3}|\[::1\])$/;
const IP_LITERAL = /^(?:[0-9]{1,3}(?:\.[0-9]{1,3}){3}|\[[0-9a-fA-F:.]+\])$/;

/**
 * `NETDIAG_DNS_UPSTREAM` on Workers: an https:// DoH URL naming a host. An IP literal cannot be
 * fetched in production and plain http would send every question in clear, so both are refused,
 * except on loopback, which only exists in local development and tests (wrangler dev, workerd).
 */
const dohUrl: Parser<string> = (text) => {
  const parsed = url(text, ['https:', 'http:']);
  const loopback = LOOPBACK_HOST.test(parsed.hostname);
  if (parsed.protocol === 'http:' && !loopback) invalid(`"${text}" must be an https:// DoH URL (plain http only to loopback, for local development)`);
  if (IP_LITERAL.test(parsed.hostname) && !loopback) {
    invalid(`"${text}" names an IP address, which Workers cannot fetch: use a host name, such as ${WORKERS_DOH_DEFAULT}`);
  }
  if (parsed.username !== '' || parsed.password !== '') invalid('must not carry credentials');
  return parsed.href;
};

/**
 * `NETDIAG_PROBES` on Workers: `region=durable-object` (a Durable Object placed by the region's
 * location hint) or `region=https://…` (a `netdiag probe` running in that region), comma-separated.
 * One `apac` hint cannot stand for two regions (docs/api.md, "Latency probes"): the operator names the one
 * it serves, and the other may only be a URL probe.
 */
const pairs = regionPairs<RegionId, WorkersProbe>(isRegionId, 'region=durable-object or region=url', (region, target) =>
  target === 'durable-object' ? { kind: 'durable-object' } : { kind: 'url', url: probeUrl(region, target) },
);
const workersProbes: Parser<Map<RegionId, WorkersProbe>> = (text) => {
  const result = pairs(text);
  if (result.get('apac-ne')?.kind === 'durable-object' && result.get('apac-se')?.kind === 'durable-object') {
    invalid('apac-ne and apac-se cannot both be durable-object: one "apac" location hint serves one of them; give the other a URL probe');
  }
  return result;
};

const workersEventsSink: Parser<WorkersEventsSink> = (text) => {
  if (text === 'log' || text === 'none' || text === 'analytics-engine') return { kind: text };
  if (/^https?:/.test(text)) return { kind: 'http', ...collectorUrl(text) };
  return invalid(`"${text}" must be log, none, analytics-engine or an http(s):// URL`);
};

/**
 * Every var the Worker reads, in the order they are read: the first bad one is named. README.md's
 * "Deploying to Cloudflare Workers" names exactly these (test/workers/config.test.ts checks).
 * Isolates of one deployment (and its Durable Objects) must hash a source alike, or one caller's
 * hits would land on many counters: the key is required here, on every limiter, and read first.
 */
export const WORKERS_VARIABLES = {
  NETDIAG_RATE_LIMIT_KEY: {
    ...SHARED.NETDIAG_RATE_LIMIT_KEY,
    required: `is required on Workers (a secret: wrangler secret put NETDIAG_RATE_LIMIT_KEY); ${MAKE_A_KEY}`,
  },
  NETDIAG_PUBLIC_URL: SHARED.NETDIAG_PUBLIC_URL,
  NETDIAG_DNS_UPSTREAM: variable({ about: 'the one resolver: an https:// DoH URL naming a host', parse: dohUrl, default: WORKERS_DOH_DEFAULT }),
  NETDIAG_DNS_TIMEOUT_MS: SHARED.NETDIAG_DNS_TIMEOUT_MS,
  NETDIAG_DNS_CACHE_SIZE: SHARED.NETDIAG_DNS_CACHE_SIZE,
  // An isolate has 128 MB for everything: the cache gets a sixteenth unless the operator says.
  NETDIAG_DNS_CACHE_BYTES: { ...SHARED.NETDIAG_DNS_CACHE_BYTES, default: WORKERS_DNS_CACHE_BYTES },
  NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: SHARED.NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES,
  NETDIAG_DNS_MAX_OUTSTANDING: SHARED.NETDIAG_DNS_MAX_OUTSTANDING,
  NETDIAG_RATE_LIMITS: SHARED.NETDIAG_RATE_LIMITS,
  NETDIAG_LIMITER: variable<LimiterKind>({ about: 'durable-object (exact, global) or binding (approximate, per location)', parse: either('durable-object', 'binding'), default: 'durable-object' }),
  NETDIAG_PROBES: variable({ about: 'region=durable-object or region=https://… pairs, comma-separated', parse: workersProbes, default: new Map<RegionId, WorkersProbe>() }),
  NETDIAG_EVENTS_SINK: variable<WorkersEventsSink>({ about: 'log, none, analytics-engine, or an http(s):// collector URL', parse: workersEventsSink, default: { kind: 'log' } }),
  NETDIAG_EVENTS_QUEUE: SHARED.NETDIAG_EVENTS_QUEUE,
  NETDIAG_LOG_LEVEL: SHARED.NETDIAG_LOG_LEVEL,
  NETDIAG_ACCESS_LOG: SHARED.NETDIAG_ACCESS_LOG,
  ...SHARED_FEATURES,
};

/** A binding the configuration relies on must exist: a missing one is named, never skipped. */
function requireBinding(env: WorkerEnv, binding: string, setting: string, why: string): void {
  if (env[binding] === undefined) fail(setting, `${why} needs the ${binding} binding, which this Worker does not have (wrangler.jsonc)`);
}

/**
 * Reads and validates the Worker's vars (WORKERS_VARIABLES, the same names, parsers and
 * messages as on Node where they apply) and checks the bindings they name. Throws ConfigError.
 */
export function loadWorkersConfig(env: WorkerEnv): WorkersConfig {
  const v = readTable(WORKERS_VARIABLES, varsOf(env));
  // `required` makes an unset key a ConfigError above; the type does not know it.
  const rateLimitKey = v.NETDIAG_RATE_LIMIT_KEY ?? fail('NETDIAG_RATE_LIMIT_KEY', WORKERS_VARIABLES.NETDIAG_RATE_LIMIT_KEY.required);
  const config: WorkersConfig = {
    publicUrl: v.NETDIAG_PUBLIC_URL,
    dohUrl: v.NETDIAG_DNS_UPSTREAM,
    ...dnsBounds(v),
    limits: v.NETDIAG_RATE_LIMITS,
    limiter: v.NETDIAG_LIMITER,
    rateLimitKey,
    probes: v.NETDIAG_PROBES,
    eventsSink: v.NETDIAG_EVENTS_SINK,
    eventsQueueSize: v.NETDIAG_EVENTS_QUEUE,
    logLevel: v.NETDIAG_LOG_LEVEL,
    accessLog: v.NETDIAG_ACCESS_LOG,
    speedTestTargets: v.NETDIAG_SPEEDTEST_TARGETS,
    turn: turnSettings(v),
    families: familyOrigins(v),
    servers: v.NETDIAG_SERVERS,
  };
  if (config.limiter === 'durable-object') requireBinding(env, 'RATE_LIMITER', 'NETDIAG_LIMITER', 'durable-object');
  else for (const binding of Object.values(LIMIT_BINDINGS)) requireBinding(env, binding, 'NETDIAG_LIMITER', 'binding');
  if ([...config.probes.values()].some((p) => p.kind === 'durable-object')) requireBinding(env, 'REGION_PROBE', 'NETDIAG_PROBES', 'a durable-object probe');
  if (config.eventsSink.kind === 'analytics-engine') requireBinding(env, 'ANALYTICS', 'NETDIAG_EVENTS_SINK', 'analytics-engine');
  return config;
}

export { ConfigError };
