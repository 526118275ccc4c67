import { callerOf, type CallerRule } from './caller.js';
import { sourceOf } from '../net/address.js';
import type { Metrics } from '../metrics/port.js';
import type { Clock } from '../ports.js';
import { WINDOW_MS, limiterKey, type Limits, type Operation } from '../ratelimit/limits.js';
import type { LimiterStore, WindowHit, WindowVerdict } from '../ratelimit/store.js';
import { problemReply } from './respond.js';
import type { Handler, HttpReply, RequestContext } from './types.js';

/**
 * Wraps a handler in the per-source, per-operation fixed-window limit (the API contract, docs/api.md
 * "Rate limits"). The source is the caller address by the /v1/ip rule, IPv6 by /64, stored only
 * as a keyed hash. When the caller cannot be established (a trusted proxy sent nothing usable)
 * the peer itself is the source: the one party we can identify is limited, never nobody.
 * With an in-process store the whole path stays synchronous.
 */
/** What the limit needs: ports and options of `Services`, named here so http/ needs none of the rest. */
export interface LimitPorts extends CallerRule {
  limits: Limits;
  limiter: LimiterStore;
  clock: Clock;
  metrics: Metrics;
  keyedHash: (input: string) => string | Promise<string>;
}

export function rateLimited(operation: Operation, services: LimitPorts, handler: Handler): Handler {
  const limit = services.limits[operation];
  const limitText = String(limit);

  const decide = (ctx: RequestContext, hit: WindowHit | WindowVerdict): HttpReply | Promise<HttpReply> => {
    const reset = String(Math.max(1, Math.ceil((hit.resetAt - services.clock.now()) / 1000)));
    // A store that only says yes or no cannot tell what remains: the header is left out.
    const counted = 'count' in hit;
    const remaining = counted ? String(Math.max(0, limit - hit.count)) : undefined;
    ctx.rate = { limit: limitText, remaining, reset };
    if (counted ? hit.count > limit : hit.limited) {
      services.metrics.rateLimited(operation);
      // Returned, not thrown: this is the path an abusive client drives hardest.
      return problemReply(
        ctx,
        'rate_limit_exceeded',
        `More than ${limitText} ${operation} requests from this source in one minute; retry after ${reset} s.`,
        { 'Retry-After': reset },
      );
    }
    return handler(ctx);
  };

  const count = (ctx: RequestContext, hash: string): HttpReply | Promise<HttpReply> => {
    const hit = services.limiter.hit(limiterKey(operation, hash), WINDOW_MS);
    return hit instanceof Promise ? hit.then((h) => decide(ctx, h)) : decide(ctx, hit);
  };

  return (ctx) => {
    const caller = callerOf(ctx, services);
    const address = caller.ok ? caller.address : caller.peer;
    const source = address === undefined ? 'unknown' : sourceOf(address);
    const hash = services.keyedHash(source);
    return typeof hash === 'string' ? count(ctx, hash) : hash.then((h) => count(ctx, h));
  };
}
