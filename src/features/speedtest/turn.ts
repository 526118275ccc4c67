import { callerOf, type CallerRule } from '../../core/http/caller.js';
import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { envelope } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { RequestContext } from '../../core/http/types.js';
import { aggregatesOf, type ParsedAddress } from '../../core/net/address.js';
import type { Clock } from '../../core/ports/clock.js';

/** The operator's TURN server and the secret it shares with this service (coturn's `static-auth-secret`). */
export interface TurnOptions {
  /** `turn:host:port` (or `turns:`), handed to clients as it is. */
  url: string;
  secret: string;
  /** How long minted credentials may open new allocations. */
  ttlSeconds: number;
}

interface TurnCredentials {
  urls: string[];
  username: string;
  credential: string;
  ttl_seconds: number;
  expires_at: string;
}

/** The keyed one-way hash of the runtime (`RuntimePorts.keyedHash`). */
type KeyedHash = (input: string) => string | Promise<string>;

const utf8 = new TextEncoder();

function base64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function hex(bytes: ArrayBuffer, count: number): string {
  let text = '';
  for (const byte of new Uint8Array(bytes, 0, count)) text += byte.toString(16).padStart(2, '0');
  return text;
}

/**
 * Put before the caller in the keyed hash, so the TURN id of a caller is never the value its
 * rate-limit keys are made of (those hash the bare source): one cannot be matched to the other.
 */
const TURN_ID_DOMAIN = 'turn-user:';

/**
 * Whose share of the TURN server a credential counts against: an IPv4 address as it is, an
 * IPv6 address by its /56 (what a subscriber is usually delegated, so one household's /64s
 * count as one caller), or `unknown` where no address could be established (the rate limit's
 * rule, src/core/http/rate-limit.ts).
 */
function turnCallerOf(address: ParsedAddress | undefined): string {
  if (address === undefined) return 'unknown';
  // The /56 window the rate limit counts an IPv6 source in as well (src/core/net/address.ts).
  return aggregatesOf(address)?.[0] ?? address.text;
}

/**
 * Mints credentials the TURN REST way (draft-uberti-behave-turn-rest-00 §2.2, what coturn's
 * `use-auth-secret` checks): the username is `<expiry in Unix seconds>:<caller id>`, the
 * password base64(HMAC-SHA1(secret, username)). The TURN server recomputes the HMAC and refuses
 * the name for a new allocation once its time has passed, so nothing is stored here.
 *
 * The caller id is 32 hex digits of SHA-256 over the keyed hash of the caller (`turnCallerOf`,
 * with a prefix of its own): the same for every credential one caller is given under one key,
 * different between callers, and not reversible to an address without the key. coturn counts
 * `user-quota` per the part after the timestamp (its `get_real_username`), so the quota becomes
 * one caller's share of the server whatever number of credentials that caller mints. WebCrypto,
 * so Node and Workers run the same code.
 */
export function turnMinter(options: TurnOptions, clock: Clock, keyedHash: KeyedHash): (caller: string) => Promise<TurnCredentials> {
  let key: Promise<CryptoKey> | undefined;
  return async (caller) => {
    key ??= crypto.subtle.importKey('raw', utf8.encode(options.secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
    const keyed = await keyedHash(TURN_ID_DOMAIN + caller);
    // Whatever the runtime's hash looks like as text, the id is hex: a TURN username must hold no
    // space, quote or backslash (coturn's is_secure_string), and hex says nothing of the hash's form.
    const callerId = hex(await crypto.subtle.digest('SHA-256', utf8.encode(keyed)), 16);
    const expiresAt = Math.floor(clock.now() / 1000) + options.ttlSeconds;
    const username = `${String(expiresAt)}:${callerId}`;
    const credential = base64(await crypto.subtle.sign('HMAC', await key, utf8.encode(username)));
    return { urls: [options.url], username, credential, ttl_seconds: options.ttlSeconds, expires_at: new Date(expiresAt * 1000).toISOString() };
  };
}

/**
 * `GET /v1/speed-test/turn-credentials`: what the page's packet-loss step and `netdiag speedtest`
 * need to reach the operator's TURN server. Its own limit (`turn`), `no-store` (each answer is
 * fresh and personal), and 404 when no TURN server is configured, before the limit counts. Same
 * origin only (no `Access-Control-Allow-Origin`): the page asks from this origin and the command
 * line is no browser, so no other site's script may read credentials a visitor's address pays for.
 */
export function turnCredentialsRoute(turn: TurnOptions | undefined, clock: Clock, keyedHash: KeyedHash, callerRule: CallerRule): RouteDefinition {
  const path = '/v1/speed-test/turn-credentials';
  if (turn === undefined) {
    const unconfigured = (): never => {
      throw new Problem('not_found', 'This deployment has no TURN server configured (NETDIAG_TURN_URL), so packet loss cannot be measured through it.');
    };
    return { path, sameOrigin: true, GET: { limit: 'turn', accept: unconfigured, handle: unconfigured } };
  }
  const mint = turnMinter(turn, clock, keyedHash);
  const callerOfRequest = (ctx: RequestContext): string => {
    const caller = callerOf(ctx, callerRule);
    return turnCallerOf(caller.ok ? caller.address : caller.peer);
  };
  return { path, sameOrigin: true, GET: { limit: 'turn', handle: async (ctx) => envelope(ctx, await mint(callerOfRequest(ctx)), CACHE.noStore) } };
}
