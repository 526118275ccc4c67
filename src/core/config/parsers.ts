/**
 * Parsers both runtimes' configuration tables use (Node's environment, Workers' vars), so a
 * variable means the same and fails with the same words wherever it is set. Each is pure: it reads
 * a value's text and returns its meaning, or throws a plain Error saying what is wrong.
 */
import { invalid, type Bounds, type Parser } from './table.js';

/** `parse`, with the bounds its error states (for the README check and the reader). */
export function bounded<T>(parse: (text: string) => T, bounds: Bounds): Parser<T> {
  return Object.assign((text: string) => parse(text), { bounds });
}

export function wholeNumber(min: number, max: number): Parser<number> {
  return bounded((text) => {
    // Digits only, and at most 16 of them so Number() is exact before the range check.
    if (!/^[0-9]{1,16}$/.test(text) || Number(text) < min || Number(text) > max) {
      invalid(`must be a whole number from ${min} to ${max}, got "${text}"`);
    }
    return Number(text);
  }, { min, max });
}

export const onOff: Parser<boolean> = (text) => {
  if (text !== 'on' && text !== 'off') invalid(`must be on or off, got "${text}"`);
  return text === 'on';
};

/** One of two words, exactly as written. */
export function either<A extends string, B extends string>(a: A, b: B): Parser<A | B> {
  return (text) => {
    if (text !== a && text !== b) invalid(`must be ${a} or ${b}, got "${text}"`);
    return text as A | B;
  };
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'silent';

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'silent'];

export const logLevel: Parser<LogLevel> = (text) => {
  if (!(LOG_LEVELS as readonly string[]).includes(text)) invalid(`must be one of ${LOG_LEVELS.join(', ')}`);
  return text as LogLevel;
};

export function url(text: string, protocols: readonly string[]): URL {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return invalid(`"${text}" is not a URL`);
  }
  if (!protocols.includes(parsed.protocol)) invalid(`"${text}" must use ${protocols.join(' or ')}`);
  return parsed;
}

/** `NETDIAG_PUBLIC_URL`: the base of problem `type` URIs, without a trailing slash. */
export const publicUrl: Parser<string> = (text) => {
  const parsed = url(text, ['http:', 'https:']);
  if (parsed.search !== '' || parsed.hash !== '') invalid('must not have a query or fragment');
  return parsed.href.replace(/\/+$/, '');
};

/**
 * Credentials in a collector URL become an HTTP Basic `Authorization` value (RFC 7617), and are
 * removed from `parsed`: fetch refuses a URL with credentials, and the URL is logged.
 */
function basicFromUrl(parsed: URL): string | undefined {
  if (parsed.username === '' && parsed.password === '') return undefined;
  let user: string;
  let password: string;
  try {
    user = decodeURIComponent(parsed.username);
    password = decodeURIComponent(parsed.password);
  } catch {
    return invalid('the credentials in the URL are not valid percent-encoding');
  }
  // RFC 7617 §2: user-id and password joined by a colon, which the user-id must not contain.
  if (user.includes(':')) invalid('the user name in the URL must not contain ":"');
  parsed.username = '';
  parsed.password = '';
  // UTF-8, then base64 (RFC 7617 §2.1 charset=UTF-8), with the platform's btoa over bytes.
  let binary = '';
  for (const byte of new TextEncoder().encode(`${user}:${password}`)) binary += String.fromCharCode(byte);
  return `Basic ${btoa(binary)}`;
}

/** An HTTP collector for events: its URL without credentials, and the credentials as Basic. */
export function collectorUrl(text: string): { url: string; authorization: string | undefined } {
  const parsed = url(text, ['http:', 'https:']);
  const authorization = basicFromUrl(parsed);
  return { url: parsed.href, authorization };
}

export const MAKE_A_KEY = 'make one with `openssl rand -base64 32` and set the same value on every instance';

/** `NETDIAG_RATE_LIMIT_KEY`: at least 32 characters of secret. */
export const secretKey: Parser<string> = (text) => {
  if (text.length < 32) invalid(`must be at least 32 characters of secret, got ${String(text.length)}: ${MAKE_A_KEY}`);
  return text;
};

/**
 * `NETDIAG_PROBES`: `region=target` pairs, comma-separated, each region one `isRegion` knows and
 * named once; `target` is read by the runtime's own rule. The regions come from the caller, so
 * configuration knows no capability's list.
 */
export function regionPairs<R extends string, T>(isRegion: (name: string) => name is R, expected: string, target: (region: R, text: string) => T): Parser<Map<R, T>> {
  return (text) => {
    const result = new Map<R, T>();
    for (const raw of text.split(',')) {
      const entry = raw.trim();
      const eq = entry.indexOf('=');
      if (eq === -1) invalid(`"${entry}" is not ${expected}`);
      const region = entry.slice(0, eq);
      if (!isRegion(region)) invalid(`unknown region "${region}"`);
      if (result.has(region)) invalid(`region "${region}" is given twice`);
      result.set(region, target(region, entry.slice(eq + 1)));
    }
    return result;
  };
}

/** A probe's URL: http(s), no credentials, query or fragment (a path prefix is kept). */
export function probeUrl(region: string, text: string): string {
  const parsed = url(text, ['http:', 'https:']);
  if (parsed.username !== '' || parsed.password !== '') invalid(`the URL for "${region}" must not carry credentials`);
  if (parsed.search !== '' || parsed.hash !== '') invalid(`the URL for "${region}" must not have a query or fragment`);
  return parsed.href;
}

/**
 * `NETDIAG_TURN_URL`: a TURN server URI as WebRTC takes it (RFC 7065 §3.1): `turn:` or `turns:`,
 * a host name, IPv4 address or bracketed IPv6 address, an optional port and an optional
 * `?transport=udp|tcp`. It is handed to clients as written.
 */
export const turnUrl: Parser<string> = (text) => {
  const match = /^turns?:(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)(?::([0-9]{1,5}))?(?:\?transport=(?:udp|tcp))?$/.exec(text);
  if (match === null) return invalid(`"${text}" must be turn:host[:port] or turns:host[:port], optionally with ?transport=udp or tcp`);
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) invalid(`"${text}" names port ${port}, outside 1 to 65535`);
  return text;
};

/** `NETDIAG_TURN_SECRET`: coturn's `static-auth-secret`; whoever knows it can mint credentials. */
export const turnSecret: Parser<string> = (text) => {
  if (text.length < 32) invalid(`must be at least 32 characters of secret (the TURN server's static-auth-secret), got ${String(text.length)}: make one with \`openssl rand -base64 32\``);
  return text;
};

/** The two families an origin of `NETDIAG_IPV4_URL` / `NETDIAG_IPV6_URL` answers over. */
type AddressFamily = 'ipv4' | 'ipv6';

const IPV4_LITERAL = /^[0-9]{1,3}(?:\.[0-9]{1,3}){3}$/;
/**
 * A host name an origin may carry into the page's Content-Security-Policy: dot-separated labels of
 * letters, digits and hyphens (the URL parser has already lower-cased it and turned an IDN into
 * A-labels). CSP3's host-source is `host-char` (ALPHA / DIGIT / "-") in dot-separated parts;
 * the URL parser lets through `*`, `;`, `,`, quotes and more, which in the header would widen
 * the policy (`http://*`), add a directive (`;sandbox`) or split the field in two (`,`, RFC 9110
 * §5.3). No empty label, so no trailing dot either: `example.net.` is another origin than
 * `example.net`, and one an operator rarely means.
 */
const HOST_NAME = /^[a-z0-9-]{1,63}(?:\.[a-z0-9-]{1,63})*$/;

/**
 * `NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`: an origin of this deployment whose name has records of
 * one family only (an A record, or an AAAA record), so a client that reaches it can only have
 * come over that family. Only an origin: the page and the CLI add the path. An IP literal of the
 * other family is refused, since it could never answer over this one; a host name's records are
 * the operator's to keep to one family (docs/operations.md, "Both address families").
 */
export function familyOrigin(family: AddressFamily): Parser<string> {
  return (text) => {
    const origin = policyOrigin(text, `https://${family}.example.net`);
    const literal = literalFamily(origin);
    if (literal !== undefined && literal !== family) invalid(`"${text}" names an ${literal === 'ipv4' ? 'IPv4' : 'IPv6'} address, which cannot answer over ${family === 'ipv4' ? 'IPv4' : 'IPv6'}`);
    return origin;
  };
}

/** The family of an origin named by an IP address; undefined for a host name. */
export function literalFamily(origin: string): AddressFamily | undefined {
  const host = new URL(origin).hostname;
  return host.startsWith('[') ? 'ipv6' : IPV4_LITERAL.test(host) ? 'ipv4' : undefined;
}

/**
 * An http(s) origin the page's Content-Security-Policy may name (the family origins, the listed
 * deployments of `NETDIAG_SERVERS`): scheme, host and port only, the host a name of HOST_NAME's
 * labels or an IP address. `example` is the origin the message offers instead.
 */
export function policyOrigin(text: string, example: string): string {
  // The URL parser drops tabs and newlines wherever they are: refused here, not silently mended.
  // (Anything outside printable ASCII but from U+00A0 up, where an IDN's letters are.)
  if (/[^!-~\u00a0-\uffff]/.test(text)) invalid(`"${text.replace(/[^ -~\u00a0-\uffff]/g, '?')}" must not contain spaces or control characters`);
  const parsed = url(text, ['http:', 'https:']);
  if (parsed.username !== '' || parsed.password !== '') invalid('must not carry credentials');
  if ((parsed.pathname !== '/' && parsed.pathname !== '') || parsed.search !== '' || parsed.hash !== '') {
    invalid(`"${text}" must be an origin only (scheme, host and port), such as ${example}`);
  }
  const host = parsed.hostname;
  // An IPv6 literal has been checked by the URL parser (hex digits, colons and dots only; a
  // zone index is no valid URL host, RFC 6874 having never been adopted by the URL standard).
  if (!host.startsWith('[') && !HOST_NAME.test(host)) {
    invalid(`"${text}" must name its host with letters, digits and hyphens in dot-separated labels (no empty label or trailing dot), or an IP address; got the host "${host}"`);
  }
  return parsed.origin;
}
