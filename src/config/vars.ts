import { isRegionId, type RegionId } from '../latency/regions.js';

/**
 * Reading operator settings: the parts every runtime shares (Node's environment, Workers' vars),
 * so a variable means the same and fails the same way wherever it is set (SPEC-NOTES, operator
 * interface: "a bad value stops start-up with one clear line naming the variable").
 */

/** A configuration value that stops start-up; `variable` names the culprit. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** An unset or empty variable means "use the default". */
export function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

export function fail(variable: string, message: string): never {
  throw new ConfigError(variable, message);
}

/** A variable read by a parser that throws a plain Error naming what is wrong with it. */
export function parsedWith<T>(env: Env, name: string, parse: (value: string) => T, fallback: T): T {
  const value = read(env, name);
  if (value === undefined) return fallback;
  try {
    return parse(value);
  } catch (err) {
    return fail(name, (err as Error).message);
  }
}

export function wholeNumber(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = read(env, name);
  if (value === undefined) return fallback;
  // Digits only, and at most 16 of them so Number() is exact before the range check.
  if (!/^[0-9]{1,16}$/.test(value) || Number(value) < min || Number(value) > max) {
    fail(name, `must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

export function parseUrl(name: string, value: string, protocols: readonly string[]): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(name, `"${value}" is not a URL`);
  }
  if (!protocols.includes(url.protocol)) fail(name, `"${value}" must use ${protocols.join(' or ')}`);
  return url;
}

/**
 * Credentials in a collector URL become an HTTP Basic `Authorization` value (RFC 7617), and are
 * removed from `url`: fetch refuses a URL with credentials, and the URL is logged.
 */
export function basicFromUrl(name: string, url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(url.username);
    password = decodeURIComponent(url.password);
  } catch {
    return fail(name, 'the credentials in the URL are not valid percent-encoding');
  }
  // RFC 7617 §2: user-id and password joined by a colon, which the user-id must not contain.
  if (user.includes(':')) fail(name, 'the user name in the URL must not contain ":"');
  url.username = '';
  url.password = '';
  // UTF-8, then base64 (RFC 7617 §2.1 charset=UTF-8), with the platform's btoa over bytes.
  let binary = '';
  for (const byte of new TextEncoder().encode(`${user}:${password}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'];

export function logLevel(env: Env): LogLevel {
  const level = (read(env, 'NETDIAG_LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(level)) fail('NETDIAG_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  return level;
}


export function onOff(env: Env, name: string, fallback: boolean): boolean {
  const value = read(env, name) ?? (fallback ? 'on' : 'off');
  if (value !== 'on' && value !== 'off') fail(name, `must be on or off, got "${value}"`);
  return value === 'on';
}

/** `NETDIAG_PUBLIC_URL`: the base of problem `type` URIs, without a trailing slash. */
export function publicUrl(env: Env): string | undefined {
  const value = read(env, 'NETDIAG_PUBLIC_URL');
  if (value === undefined) return undefined;
  const url = parseUrl('NETDIAG_PUBLIC_URL', value, ['http:', 'https:']);
  if (url.search !== '' || url.hash !== '') fail('NETDIAG_PUBLIC_URL', 'must not have a query or fragment');
  return url.href.replace(/\/+$/, '');
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

/** The resolver's deadline, cache and in-flight bounds: the same variables on every runtime. */
export function dnsBounds(env: Env): DnsBounds {
  return {
    dnsTimeoutMs: wholeNumber(env, 'NETDIAG_DNS_TIMEOUT_MS', 2000, 1, 60_000),
    dnsCacheSize: wholeNumber(env, 'NETDIAG_DNS_CACHE_SIZE', 10_000, 0, 10_000_000),
    dnsCacheBytes: wholeNumber(env, 'NETDIAG_DNS_CACHE_BYTES', 64 * 1024 * 1024, 0, 16 * 1024 * 1024 * 1024),
    dnsCacheMaxEntryBytes: wholeNumber(env, 'NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES', 32 * 1024, 1, 1024 * 1024),
    dnsMaxOutstanding: wholeNumber(env, 'NETDIAG_DNS_MAX_OUTSTANDING', 1_000, 1, 100_000),
  };
}

export function eventsQueueSize(env: Env): number {
  return wholeNumber(env, 'NETDIAG_EVENTS_QUEUE', 10_000, 1, 1_000_000);
}

/** An HTTP collector for events: its URL without credentials, and the credentials as Basic. */
export function collectorUrl(name: string, value: string): { url: string; authorization: string | undefined } {
  const url = parseUrl(name, value, ['http:', 'https:']);
  const authorization = basicFromUrl(name, url);
  return { url: url.href, authorization };
}

export const MAKE_A_KEY = 'make one with `openssl rand -base64 32` and set the same value on every instance';

/** `NETDIAG_RATE_LIMIT_KEY`, when set: at least 32 characters of secret. */
export function secretKey(env: Env): string | undefined {
  const name = 'NETDIAG_RATE_LIMIT_KEY';
  const key = read(env, name);
  if (key !== undefined && key.length < 32) fail(name, `must be at least 32 characters of secret, got ${String(key.length)}: ${MAKE_A_KEY}`);
  return key;
}

/**
 * `NETDIAG_PROBES`: `region=target` pairs, comma-separated, each region one of the seven and
 * named once; `target` is read by the runtime's own rule.
 */
export function regionEntries<T>(env: Env, expected: string, target: (region: RegionId, value: string) => T): Map<RegionId, T> {
  const name = 'NETDIAG_PROBES';
  const value = read(env, name);
  const result = new Map<RegionId, T>();
  if (value === undefined) return result;
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    const eq = entry.indexOf('=');
    if (eq === -1) fail(name, `"${entry}" is not ${expected}`);
    const region = entry.slice(0, eq);
    if (!isRegionId(region)) fail(name, `unknown region "${region}"`);
    if (result.has(region)) fail(name, `region "${region}" is given twice`);
    result.set(region, target(region, entry.slice(eq + 1)));
  }
  return result;
}

/** A probe's URL: http(s), no credentials, query or fragment (a path prefix is kept). */
export function probeUrl(region: RegionId, value: string): string {
  const name = 'NETDIAG_PROBES';
  const url = parseUrl(name, value, ['http:', 'https:']);
  if (url.username !== '' || url.password !== '') fail(name, `the URL for "${region}" must not carry credentials`);
  if (url.search !== '' || url.hash !== '') fail(name, `the URL for "${region}" must not have a query or fragment`);
  return url.href;
}
