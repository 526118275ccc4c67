import { CACHE } from '../http/headers.js';
import { Problem } from '../http/problems.js';
import { envelope } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { Clock } from '../ports.js';

/** The operator's TURN server and the secret it shares with this service (coturn's `static-auth-secret`). */
export interface TurnOptions {
  /** `turn:host:port` (or `turns:`), handed to clients as it is. */
  url: string;
  secret: string;
  /** How long minted credentials stay valid. */
  ttlSeconds: number;
}

interface TurnCredentials {
  urls: string[];
  username: string;
  credential: string;
  ttl_seconds: number;
  expires_at: string;
}

const utf8 = new TextEncoder();

function base64(bytes: ArrayBuffer): string {
  let binary = '';
  for (const byte of new Uint8Array(bytes)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Mints credentials the TURN REST way (draft-uberti-behave-turn-rest-00 §2.2, what coturn's
 * `use-auth-secret` checks): the username is `<expiry in Unix seconds>:<random>`, the password
 * base64(HMAC-SHA1(secret, username)). The TURN server recomputes the HMAC and refuses the name
 * once its time has passed, so nothing is stored here, and nothing about the caller is in them:
 * the random part is a fresh id, not an address or a session. WebCrypto, so Node and Workers
 * run the same code.
 */
export function turnMinter(options: TurnOptions, clock: Clock, newId: () => string): () => Promise<TurnCredentials> {
  let key: Promise<CryptoKey> | undefined;
  return async () => {
    key ??= crypto.subtle.importKey('raw', utf8.encode(options.secret), { name: 'HMAC', hash: 'SHA-1' }, false, ['sign']);
    const expiresAt = Math.floor(clock.now() / 1000) + options.ttlSeconds;
    const username = `${String(expiresAt)}:${newId().replaceAll('-', '')}`;
    const credential = base64(await crypto.subtle.sign('HMAC', await key, utf8.encode(username)));
    return { urls: [options.url], username, credential, ttl_seconds: options.ttlSeconds, expires_at: new Date(expiresAt * 1000).toISOString() };
  };
}

/**
 * `GET /v1/speed-test/turn-credentials`: what the page's packet-loss step and `netdiag speedtest`
 * need to reach the operator's TURN server. Its own limit (`turn`), `no-store` (each answer is
 * fresh and personal), and 404 when no TURN server is configured, before the limit counts.
 */
export function turnCredentialsRoute(turn: TurnOptions | undefined, clock: Clock, newId: () => string): RouteDefinition {
  const path = '/v1/speed-test/turn-credentials';
  if (turn === undefined) {
    const unconfigured = (): never => {
      throw new Problem('not_found', 'This deployment has no TURN server configured (NETDIAG_TURN_URL), so packet loss cannot be measured through it.');
    };
    return { path, GET: { limit: 'turn', accept: unconfigured, handle: unconfigured } };
  }
  const mint = turnMinter(turn, clock, newId);
  return { path, GET: { limit: 'turn', handle: async (ctx) => envelope(ctx, await mint(), CACHE.noStore) } };
}
