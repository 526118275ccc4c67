import { callerOf, type CallerRule } from './caller.js';
import { aggregatesOf, sourceOf } from '../net/address.js';
import type { Metrics } from '../ports/metrics.js';
import type { Clock } from '../ports/clock.js';
import { AGGREGATES, WINDOW_MS, limiterKey, type AggregatePrefix, type Limits } from '../ratelimit/limits.js';
import type { LimiterStore, WindowHit, WindowVerdict, Operation } from '../ports/limiter-store.js';
import { problemReply } from './respond.js';
import type { Handler, HttpReply, RequestContext } from './types.js';

/** What the limit needs: ports and options of `Services`, named here so http/ needs none of the rest. */
export interface LimitPorts extends CallerRule {
  limits: Limits;
  limiter: LimiterStore;
  clock: Clock;
  metrics: Metrics;
  keyedHash: (input: string) => string | Promise<string>;
}

type Hit = WindowHit | WindowVerdict;

/** One window a request is counted in: the source's own, or an IPv6 source's /56 or /48. */
interface Window {
  prefix: AggregatePrefix | undefined;
  limit: number;
  limitText: string;
  /** Who is over it, for the problem's detail. */
  who: string;
}

/** What is left in a window: unknown (Infinity) for a store that answers only yes or no, until it says no. */
function remainingIn(window: Window, hit: Hit): number {
  if ('count' in hit) return window.limit - hit.count;
  return hit.limited ? 0 : Infinity;
}

/** Every value, synchronously when none is a promise (the in-process store's path). */
function allOf<T>(values: readonly (T | Promise<T>)[]): readonly T[] | Promise<readonly T[]> {
  return values.some((v) => v instanceof Promise) ? Promise.all(values) : (values as readonly T[]);
}

/**
 * Wraps a handler in the per-source, per-operation fixed-window limit (the API contract, docs/api.md
 * "Rate limits"). The source is the caller address by the /v1/ip rule, IPv6 by /64, stored only
 * as a keyed hash; an IPv6 source is also counted in its /56 and /48 windows, at a multiple of
 * the limit (`AGGREGATES`). When the caller cannot be established (a trusted proxy sent nothing
 * usable) the peer itself is the source: the one party we can identify is limited, never nobody.
 * With an in-process store the whole path stays synchronous.
 */
export function rateLimited(operation: Operation, services: LimitPorts, handler: Handler): Handler {
  const limit = services.limits[operation];
  const own: Window = { prefix: undefined, limit, limitText: String(limit), who: 'this source' };
  const windows: readonly Window[] = [
    own,
    ...AGGREGATES.map(({ prefix, factor }) => ({ prefix, limit: limit * factor, limitText: String(limit * factor), who: `this source's /${String(prefix)}` })),
  ];

  /**
   * The window that binds, whose limit the RateLimit headers report: the least remaining, and of
   * equals the one that resets last. A refused request is over it, and its reset is when every
   * window it is over has reset, so `Retry-After` is when a retry can pass.
   */
  const decide = (ctx: RequestContext, hits: readonly Hit[]): HttpReply | Promise<HttpReply> => {
    let at = 0;
    let least = Infinity;
    for (let i = 0; i < hits.length; i++) {
      const hit = hits[i] as Hit;
      const left = Math.max(0, remainingIn(windows[i] as Window, hit));
      if (left < least || (left === least && hit.resetAt > (hits[at] as Hit).resetAt)) [at, least] = [i, left];
    }
    const hit = hits[at] as Hit;
    const window = windows[at] as Window;
    const reset = String(Math.max(1, Math.ceil((hit.resetAt - services.clock.now()) / 1000)));
    // A store that only says yes or no cannot tell what remains: the header is left out.
    const counted = 'count' in hit;
    const remaining = counted ? String(least) : undefined;
    const refused = counted ? hit.count > window.limit : hit.limited;
    // A request counted against a second operation (RouteMethod.alsoLimit) reports the one that
    // binds: the one refusing it, else the one with less left.
    if (refused || ctx.rate?.remaining === undefined || least < Number(ctx.rate.remaining)) ctx.rate = { limit: window.limitText, remaining, reset };
    if (refused) {
      services.metrics.rateLimited(operation);
      // Returned, not thrown: this is the path an abusive client drives hardest.
      return problemReply(
        ctx,
        'rate_limit_exceeded',
        `More than ${window.limitText} ${operation} requests from ${window.who} in one minute; retry after ${reset} s.`,
        { 'Retry-After': reset },
      );
    }
    return handler(ctx);
  };

  /** An IPv4 source (or an unknown one): one window, one hit, as before there were wider ones. */
  const countOne = (ctx: RequestContext, hash: string): HttpReply | Promise<HttpReply> => {
    ctx.sourceKey = hash;
    const hit = services.limiter.hit(limiterKey(operation, hash), WINDOW_MS);
    return hit instanceof Promise ? hit.then((h) => decide(ctx, [h])) : decide(ctx, [hit]);
  };

  const countAll = (ctx: RequestContext, hashes: readonly string[]): HttpReply | Promise<HttpReply> => {
    ctx.sourceKey = hashes[0];
    const hits = allOf(hashes.map((hash, i) => services.limiter.hit(limiterKey(operation, hash, windows[i]?.prefix), WINDOW_MS)));
    return hits instanceof Promise ? hits.then((h) => decide(ctx, h)) : decide(ctx, hits);
  };

  return (ctx) => {
    const caller = callerOf(ctx, services);
    const address = caller.ok ? caller.address : caller.peer;
    const source = address === undefined ? 'unknown' : sourceOf(address);
    const wider = address === undefined ? undefined : aggregatesOf(address);
    if (wider === undefined) {
      const hash = services.keyedHash(source);
      return typeof hash === 'string' ? countOne(ctx, hash) : hash.then((h) => countOne(ctx, h));
    }
    const hashes = allOf([source, ...wider].map((s) => services.keyedHash(s)));
    return hashes instanceof Promise ? hashes.then((h) => countAll(ctx, h)) : countAll(ctx, hashes);
  };
}
