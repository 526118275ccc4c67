import { callerOf } from '../ip/caller.js';
import { sourceOf } from '../ip/address.js';
import { WINDOW_MS, type Operation } from '../ratelimit/limits.js';
import type { Services } from '../services.js';
import { Problem } from './problems.js';
import type { Handler } from './types.js';

/**
 * Wraps a handler in the per-source, per-operation fixed-window limit (spec §8, SPEC-NOTES
 * "Rate limits"). The source is the caller address by the /v1/ip rule, IPv6 by /64, stored only
 * as a keyed hash. When the caller cannot be established (a trusted proxy sent nothing usable)
 * the peer itself is the source: the one party we can identify is limited, never nobody.
 */
export function rateLimited(operation: Operation, services: Services, handler: Handler): Handler {
  const limit = services.limits[operation];
  const limitText = String(limit);
  return async (ctx) => {
    const caller = callerOf(ctx, services);
    const address = caller.ok ? caller.address : caller.peer;
    const source = address === undefined ? 'unknown' : sourceOf(address);
    const { count, resetAt } = await services.limiter.hit(`${operation}:${services.keyedHash(source)}`, WINDOW_MS);
    const reset = String(Math.max(1, Math.ceil((resetAt - services.clock.now()) / 1000)));
    ctx.rateHeaders = {
      'RateLimit-Limit': limitText,
      'RateLimit-Remaining': String(Math.max(0, limit - count)),
      'RateLimit-Reset': reset,
    };
    if (count > limit) {
      throw new Problem(
        'rate_limit_exceeded',
        `More than ${limitText} ${operation} requests from this source in one minute; retry after ${reset} s.`,
        { 'Retry-After': reset },
      );
    }
    return handler(ctx);
  };
}
