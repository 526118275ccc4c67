// The client commands' view of a deployment: requests to its API with a deadline, the
// envelope's `data` on success, and a failure that says what went wrong (exit 1) otherwise.

import { setTimeout as sleep } from 'node:timers/promises';
import { BodyTooLarge, MAX_API_BODY_BYTES, boundedText } from './bounded-body.js';
import { MAX_LIMIT_WAIT_S, retryAfterSeconds } from '../../common/rate-limit.js';
import { notWaitedText, waitingLine } from './rate-limit.js';

export const DEFAULT_URL = 'http://localhost:8080';

/** A failure of the API or the network: printed as one message, exit code 1 (4 for a 429, rate-limit.ts). */
export class ApiFailure extends Error {
  constructor(
    message: string,
    /** The HTTP status when the API answered with an error; undefined when it could not be reached. */
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface Client {
  base: string;
  timeoutMs: number;
  /** The fetch the client sends with: a command's own requests to the deployment (a timed round trip) go through it too, bound as its API calls are. */
  send: Fetcher;
  /** How its connections are made (`--source`, `-4` / `-6`, source.ts): a command's other connections (transfers, TURN) are made the same way. */
  binding?: Binding;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body: unknown): Promise<T>;
}

/**
 * `title: detail` of a problem document (the API contract), the title alone when there is no detail, or
 * the start of whatever else came.
 */
export function problemBodyText(body: string, status: number): string {
  try {
    const { title, detail } = JSON.parse(body) as { title?: unknown; detail?: unknown };
    if (typeof title === 'string') return typeof detail === 'string' ? `${title}: ${detail}` : title;
  } catch {
    // Not JSON: the raw text below.
  }
  const text = body.slice(0, 200).trim();
  return text === '' ? `HTTP ${String(status)}` : `HTTP ${String(status)}: ${text}`;
}

/** How every connection of a command is made (`--source`, `-4` / `-6`, source.ts): from this local address, over this family (the system's choice where unset). */
export interface Binding {
  localAddress?: string;
  family?: 4 | 6;
}

/** The fetch a client sends with: the platform's, or one bound to a source address or a family (source.ts). */
export type Fetcher = (url: string, init: RequestInit) => Promise<Response>;

/** Same-origin redirects followed for one API call; the API itself sends none. */
const MAX_REDIRECTS = 5;

/**
 * Sends `init` to `url`, following a redirect only within `url`'s origin: a redirect elsewhere
 * would have this command print, and a monitor record, another server's answer as this one's (a
 * 302 from a hostile or misconfigured deployment), so it is refused, naming where it led.
 */
async function sameOrigin(send: Fetcher, url: string, init: RequestInit): Promise<Response> {
  const origin = new URL(url).origin;
  let at = url;
  for (let hop = 0; ; hop++) {
    const res = await send(at, { ...init, redirect: 'manual' });
    const location = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (location === null) return res;
    await res.body?.cancel();
    const next = new URL(location, at);
    if (next.origin !== origin) throw new ApiFailure(`${at} redirected to ${next.origin}, another server; netdiag follows no redirect away from the server it was given (if you trust that one, give it with --url ${next.origin})`, res.status);
    if (hop === MAX_REDIRECTS) throw new ApiFailure(`${url} redirected more than ${String(MAX_REDIRECTS)} times`, res.status);
    at = next.href;
  }
}

/** How a client meets a 429 (rate-limit.ts). */
export interface LimitPolicy {
  /** Wait a GET's Retry-After once and ask again (not `watch`, whose polls record a refusal as one). */
  wait: boolean;
  /** Where the wait is said: standard error by default. */
  say: (line: string) => void;
}

const sayOnStderr = (line: string) => {
  process.stderr.write(`netdiag: ${line}\n`);
};

export function clientFor(url: string, timeoutMs: number, send: Fetcher = fetch, limits: LimitPolicy = { wait: true, say: sayOnStderr }): Client {
  const base = url.replace(/\/+$/, '');
  const once = async (path: string, init: RequestInit): Promise<{ res: Response; text: string }> => {
    try {
      const res = await sameOrigin(send, `${base}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      return { res, text: await boundedText(res, MAX_API_BODY_BYTES) };
    } catch (err) {
      if (err instanceof ApiFailure) throw err;
      if (err instanceof BodyTooLarge) throw new ApiFailure(`${base}${path} answered more than ${String(err.limit)} bytes, far more than any answer of the API; is this a netdiag server?`);
      throw new ApiFailure(connectionFailure(base, err, timeoutMs));
    }
  };
  const call = async <T>(path: string, init: RequestInit): Promise<T> => {
    let { res, text } = await once(path, init);
    // A GET refused by the rate limit is asked once more after the wait the server names; a POST
    // (an analytics event) is not held up for it: its caller says it was not accepted.
    if (res.status === 429 && limits.wait && (init.method ?? 'GET') === 'GET') {
      const seconds = retryAfterSeconds(res.headers.get('retry-after'));
      if (seconds === undefined || seconds > MAX_LIMIT_WAIT_S) {
        throw new ApiFailure(`${problemBodyText(text, res.status)} (not waited: ${notWaitedText(seconds === undefined ? { why: 'no-retry-after' } : { why: 'too-long', seconds })})`, res.status);
      }
      limits.say(waitingLine(path.split('?')[0] ?? path, seconds, 'asking again'));
      await sleep(seconds * 1000);
      ({ res, text } = await once(path, init));
    }
    if (!res.ok) throw new ApiFailure(`${problemBodyText(text, res.status)}${pathHint(base, res.status)}`, res.status);
    let body: { data?: T };
    try {
      body = JSON.parse(text) as { data?: T };
    } catch {
      body = {};
    }
    if (body.data === undefined) throw new ApiFailure(`${base}${path} answered ${String(res.status)} without the API's envelope; is this a netdiag server?`);
    return body.data;
  };
  return {
    base,
    timeoutMs,
    send,
    get: <T>(path: string) => call<T>(path, { headers: { Accept: 'application/json' } }),
    post: <T>(path: string, body: unknown) => call<T>(path, { method: 'POST', headers: { Accept: 'application/json', 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
  };
}

/** How a person makes Node trust a certificate it cannot verify (Node reads no system store by default). */
const TRUST_HINT = "if it is the server's own, trust it with NODE_EXTRA_CA_CERTS=/path/to/its-ca.pem";

/**
 * A 404 from a --url that carries a path: the API's paths are taken from the server's origin, so
 * `--url https://host/v1` asks for /v1/v1/ip, which a bare "Not found" would leave unexplained.
 */
function pathHint(base: string, status: number): string {
  if (status !== 404) return '';
  let path: string;
  try {
    path = new URL(base).pathname;
  } catch {
    return '';
  }
  return path === '/' || path === '' ? '' : ` (--url is the server's address without a path, as https://host:8080; drop "${path}")`;
}

/** Socket and TLS error codes in words; any other code is shown as it is. */
const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'connection refused (is netdiag running there?)',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved just now',
  ECONNRESET: 'the connection was reset',
  EADDRNOTAVAIL: 'the source address cannot be sent from (is it still on this host?)',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the network',
  ETIMEDOUT: 'the connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
  UND_ERR_SOCKET: 'the connection closed unexpectedly (a server that speaks HTTPS closes a plain http:// request like this: try https://)',
  // TLS, in words with the fix: Node names these by OpenSSL's codes only.
  ERR_SSL_WRONG_VERSION_NUMBER: 'the server does not speak TLS there (a plain HTTP server answers https:// like this: try http://)',
  ERR_SSL_PACKET_LENGTH_TOO_LONG: 'the server does not speak TLS there (a plain HTTP server answers https:// like this: try http://)',
  DEPTH_ZERO_SELF_SIGNED_CERT: `its certificate is self-signed, so nothing vouches for it; ${TRUST_HINT}`,
  SELF_SIGNED_CERT_IN_CHAIN: `its certificate chain ends in an authority this machine does not trust; ${TRUST_HINT}`,
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: `its certificate's issuer is not one this machine trusts; ${TRUST_HINT}`,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: `its certificate's issuer is not one this machine trusts; ${TRUST_HINT}`,
  CERT_HAS_EXPIRED: 'its certificate has expired (the operator renews it)',
  CERT_NOT_YET_VALID: "its certificate is not valid yet (check this machine's clock)",
  ERR_TLS_CERT_ALTNAME_INVALID: 'its certificate is for another name (use the name the certificate is for in --url)',
};

/** What failed to connect, in words: the cause Node puts under fetch's "fetch failed". */
function connectionFailure(base: string, err: unknown, timeoutMs: number): string {
  if (err instanceof DOMException && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return `no answer from ${base} within ${String(timeoutMs)} ms`;
  }
  const cause = err instanceof Error ? (err.cause as { code?: string; message?: string } | undefined) : undefined;
  const code = cause?.code;
  // fetch refuses the Fetch standard's "bad ports" (9, 25, 6000, …) before connecting.
  if (cause?.message === 'bad port') return `cannot reach ${base}: fetch refuses that port (a "bad port" in the Fetch standard); serve netdiag on another`;
  const why = (code === undefined ? undefined : CONNECT_FAILURES[code]) ?? code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  return `cannot reach ${base}: ${why}`;
}
