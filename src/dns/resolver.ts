import type { CachedResult, DnsCache } from './cache.js';
import { DnsFailure } from './errors.js';
import type { DnsTransport } from './transport.js';
import type { DnsResult, DnsType } from './types.js';
import { decodeResponse, encodeQuery, messageId } from './wire.js';

/** A result and the seconds a client may cache it (`Cache-Control: max-age`; 0 is `no-store`). */
export type Resolution = CachedResult;

/** Port: what routes need from DNS. */
export interface Resolver {
  /**
   * Through the shared TTL cache; concurrent identical misses share one upstream query. A hit
   * answers synchronously, so the cached path allocates no promise.
   */
  resolve(name: string, type: DnsType): Resolution | Promise<Resolution>;
  /**
   * Straight to the upstream, never cached: for lookups about one caller (the PTR of /v1/ip),
   * which must not sit in a shared cache (SPEC-NOTES, /v1/ip). Identical questions asked while
   * one is in flight share its query (a page firing parallel requests from one address asks
   * once); nothing is kept once the answer arrives, and a later call always asks again.
   */
  resolveUncached(name: string, type: DnsType, timeoutMs: number): Promise<DnsResult>;
}

export interface ResolverOptions {
  transport: DnsTransport;
  /** One deadline for the whole lookup, the TCP retry of a truncated reply included. */
  timeoutMs: number;
  cache: DnsCache;
}

export function createResolver({ transport, timeoutMs, cache }: ResolverOptions): Resolver {
  const inflight = new Map<string, Promise<DnsResult>>();
  // Apart from `inflight`, so an uncached lookup never hands its answer to the cache's waiters.
  const inflightUncached = new Map<string, Promise<DnsResult>>();

  async function ask(via: DnsTransport, query: Uint8Array, signal: AbortSignal, name: string, type: DnsType) {
    const reply = await via.exchange(query, signal);
    if (messageId(reply) !== messageId(query)) throw new DnsFailure('invalid', 'its ID does not match the query');
    return decodeResponse(reply, name, type);
  }

  async function lookup(name: string, type: DnsType, deadlineMs: number): Promise<DnsResult> {
    // A timer cleared when the lookup ends: AbortSignal.timeout would leave every one running
    // until it fires, and firing costs an exception object each time.
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      deadline.abort();
    }, deadlineMs);
    try {
      const query = encodeQuery(name, type);
      let decoded = await ask(transport, query, deadline.signal, name, type);
      if (decoded.truncated) {
        const fallback = transport.truncationFallback;
        if (fallback === undefined) throw new DnsFailure('invalid', 'it is truncated on a stream transport');
        decoded = await ask(fallback, query, deadline.signal, name, type);
        if (decoded.truncated) throw new DnsFailure('invalid', 'it is truncated on a stream transport');
      }
      return decoded.result;
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    resolve(name, type) {
      const key = `${type} ${name}`;
      const cached = cache.get(key);
      if (cached !== undefined) return cached;
      let pending = inflight.get(key);
      if (pending === undefined) {
        pending = lookup(name, type, timeoutMs)
          .then((result) => {
            cache.set(key, result);
            return result;
          })
          .finally(() => inflight.delete(key));
        inflight.set(key, pending);
      }
      return pending.then((result) => ({ result, maxAge: result.cacheTtl }));
    },
    resolveUncached(name, type, deadlineMs) {
      // Keyed by the deadline too: a caller with a shorter one must not wait on a longer one.
      const key = `${type} ${name} ${deadlineMs}`;
      let pending = inflightUncached.get(key);
      if (pending === undefined) {
        pending = lookup(name, type, Math.min(deadlineMs, timeoutMs)).finally(() => inflightUncached.delete(key));
        inflightUncached.set(key, pending);
      }
      return pending;
    },
  };
}
