/**
 * The rows both runtimes' configuration tables share (src/runtime/node/adapter/config.ts,
 * src/runtime/workers/adapter/config.ts): one declaration each, so a variable has the same default,
 * bounds and messages on Node and on Workers. Each runtime's table names every variable it reads,
 * taking these rows where the meaning is shared.
 */
import { DEFAULT_LIMITS, MAX_LIMIT, parseLimits, type Limits } from '../ratelimit/limits.js';
import { bounded, familyOrigin, logLevel, onOff, publicUrl, secretKey, turnSecret, turnUrl, wholeNumber, type LogLevel } from './parsers.js';
import { fail, variable } from './table.js';
import { serverList } from './server-list.js';
import type { ListedServer } from '../../common/servers.js';

export type { LogLevel };

export const SHARED = {
  NETDIAG_PUBLIC_URL: variable<string | undefined>({ about: 'base of problem `type` URIs', parse: publicUrl, default: undefined }),
  NETDIAG_DNS_TIMEOUT_MS: variable({ about: 'upstream deadline for a whole DNS lookup', parse: wholeNumber(1, 60_000), default: 2000 }),
  NETDIAG_DNS_CACHE_SIZE: variable({ about: 'most (name, type) results the DNS cache holds; 0 turns it off', parse: wholeNumber(0, 10_000_000), default: 10_000 }),
  NETDIAG_DNS_CACHE_BYTES: variable({ about: 'most bytes the DNS cache holds, by its estimate of each entry', parse: wholeNumber(0, 16 * 1024 * 1024 * 1024), default: 64 * 1024 * 1024 }),
  NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: variable({ about: 'an answer estimated above this is served but not cached', parse: wholeNumber(1, 1024 * 1024), default: 32 * 1024 }),
  NETDIAG_DNS_MAX_OUTSTANDING: variable({ about: 'most upstream lookups in flight at once; past it a lookup is 503 at once', parse: wholeNumber(1, 100_000), default: 1_000 }),
  NETDIAG_RATE_LIMIT_KEY: variable<string | undefined>({ about: 'secret for the keyed hash of rate-limit sources, the same on every instance', parse: secretKey, default: undefined }),
  NETDIAG_EVENTS_QUEUE: variable({ about: 'most events the HTTP sink holds while its collector is slow or down', parse: wholeNumber(1, 1_000_000), default: 10_000 }),
  NETDIAG_LOG_LEVEL: variable<LogLevel>({ about: 'the least severe log line written', parse: logLevel, default: 'info' }),
  NETDIAG_ACCESS_LOG: variable({ about: 'on: one JSON line per request, nothing about the caller', parse: onOff, default: false }),
  NETDIAG_SPEEDTEST_TARGETS: variable({ about: 'on/off: the speed-test targets /__down and /__up', parse: onOff, default: true }),
  NETDIAG_TURN_URL: variable<string | undefined>({ about: 'the TURN server packet loss is measured through: turn:host[:port]', parse: turnUrl, default: undefined }),
  NETDIAG_TURN_SECRET: variable<string | undefined>({ about: "the TURN server's static-auth-secret, for minting credentials", parse: turnSecret, default: undefined }),
  NETDIAG_TURN_TTL_SECONDS: variable({ about: 'how long minted TURN credentials may open new allocations', parse: wholeNumber(60, 86_400), default: 600 }),
  NETDIAG_IPV4_URL: variable<string | undefined>({ about: "an origin of this deployment with only an A record, for the dual-stack check", parse: familyOrigin('ipv4'), default: undefined }),
  NETDIAG_IPV6_URL: variable<string | undefined>({ about: "an origin of this deployment with only an AAAA record, for the dual-stack check", parse: familyOrigin('ipv6'), default: undefined }),
  NETDIAG_SERVERS: variable<ListedServer[]>({ about: 'the operator\'s deployments, a JSON array of {name, url, location, families}, served at /v1/servers', parse: serverList, default: [] }),
  NETDIAG_RATE_LIMITS: variable<Limits>({ about: 'per-operation limits per 60 s, e.g. ip=120,dns=30', parse: bounded(parseLimits, { min: 1, max: MAX_LIMIT }), default: DEFAULT_LIMITS }),
} as const;

/** The features both runtimes configure alike: the speed-test targets, TURN credentials, the family origins. */
export const SHARED_FEATURES = {
  NETDIAG_SPEEDTEST_TARGETS: SHARED.NETDIAG_SPEEDTEST_TARGETS,
  NETDIAG_TURN_URL: SHARED.NETDIAG_TURN_URL,
  NETDIAG_TURN_SECRET: SHARED.NETDIAG_TURN_SECRET,
  NETDIAG_TURN_TTL_SECONDS: SHARED.NETDIAG_TURN_TTL_SECONDS,
  NETDIAG_IPV4_URL: SHARED.NETDIAG_IPV4_URL,
  NETDIAG_IPV6_URL: SHARED.NETDIAG_IPV6_URL,
  NETDIAG_SERVERS: SHARED.NETDIAG_SERVERS,
} as const;

/** The deployment's single-family origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`); null where not set. */
export interface FamilyOrigins {
  ipv4: string | null;
  ipv6: string | null;
}

export function familyOrigins(values: { NETDIAG_IPV4_URL: string | undefined; NETDIAG_IPV6_URL: string | undefined }): FamilyOrigins {
  return { ipv4: values.NETDIAG_IPV4_URL ?? null, ipv6: values.NETDIAG_IPV6_URL ?? null };
}

export interface DnsBounds {
  dnsTimeoutMs: number;
  dnsCacheSize: number;
  /** Most bytes the DNS cache holds, by its estimate of each entry's memory. */
  dnsCacheBytes: number;
  /** An answer estimated above this is served but not cached (dnsdist's maximumEntrySize). */
  dnsCacheMaxEntryBytes: number;
  /** Most upstream lookups in flight at once; past it a lookup is 503 at once. */
  dnsMaxOutstanding: number;
}

/** The resolver's deadline, cache and in-flight bounds, from a table's values: the same names on every runtime. */
export function dnsBounds(values: {
  NETDIAG_DNS_TIMEOUT_MS: number;
  NETDIAG_DNS_CACHE_SIZE: number;
  NETDIAG_DNS_CACHE_BYTES: number;
  NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: number;
  NETDIAG_DNS_MAX_OUTSTANDING: number;
}): DnsBounds {
  return {
    dnsTimeoutMs: values.NETDIAG_DNS_TIMEOUT_MS,
    dnsCacheSize: values.NETDIAG_DNS_CACHE_SIZE,
    dnsCacheBytes: values.NETDIAG_DNS_CACHE_BYTES,
    dnsCacheMaxEntryBytes: values.NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES,
    dnsMaxOutstanding: values.NETDIAG_DNS_MAX_OUTSTANDING,
  };
}

/** The TURN server credentials are minted for: both its URL and its secret, or neither. */
export interface TurnSettings {
  url: string;
  secret: string;
  ttlSeconds: number;
}

/** `NETDIAG_TURN_*` read together: one without the other stops start-up, naming the one missing. */
export function turnSettings(values: { NETDIAG_TURN_URL: string | undefined; NETDIAG_TURN_SECRET: string | undefined; NETDIAG_TURN_TTL_SECONDS: number }): TurnSettings | undefined {
  const { NETDIAG_TURN_URL: url, NETDIAG_TURN_SECRET: secret } = values;
  if (url === undefined && secret === undefined) return undefined;
  if (secret === undefined) return fail('NETDIAG_TURN_SECRET', 'is required with NETDIAG_TURN_URL: the TURN server\'s static-auth-secret, to mint credentials it accepts');
  if (url === undefined) return fail('NETDIAG_TURN_URL', 'is required with NETDIAG_TURN_SECRET: the turn:host:port the credentials are for');
  return { url, secret, ttlSeconds: values.NETDIAG_TURN_TTL_SECONDS };
}
