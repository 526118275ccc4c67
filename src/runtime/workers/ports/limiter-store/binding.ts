import { WINDOW_MS, windowOfKey } from '../../../../core/ratelimit/limits.js';
import type { BoundOperation } from '../../adapter/config.js';
import type { SharedStore } from '../../../../core/ratelimit/fallback-store.js';
import type { WindowVerdict } from '../../../../core/ports/limiter-store.js';
import type { Clock } from '../../../../core/ports/clock.js';

/**
 * The platform's rate-limiting binding, one per operation, each with its limit and a 60 s period
 * in wrangler.jsonc. It answers only `{ success }`, counts per Cloudflare location and is
 * approximate (its documentation's words), so `RateLimit-Remaining` is omitted (docs/api.md) and
 * the reset is the end of the current minute, the best it can be told. Cheaper than a Durable
 * Object per caller, for operators who prefer that to an exact, global count. It keeps only the
 * per-source window, not an IPv6 source's /56 and /48 ones.
 */
export class BindingLimiterStore implements SharedStore {
  readonly name = 'rate-limiting binding';

  constructor(
    private readonly bindings: Readonly<Record<BoundOperation, RateLimit>>,
    private readonly clock: Clock,
  ) {}

  async hit(key: string): Promise<WindowVerdict> {
    const window = windowOfKey(key);
    if (window === undefined) throw new Error(`a limiter key without an operation: ${key.slice(0, key.indexOf(':'))}`);
    if (window.operation === 'port') throw new Error('the port check is not served on Workers: nothing counts it');
    const now = this.clock.now();
    const resetAt = now - (now % WINDOW_MS) + WINDOW_MS;
    // A binding's limit is fixed in wrangler.jsonc, the per-source one: it cannot count an IPv6
    // source's /56 or /48 at a multiple of it. Those windows are not kept here (docs/api.md).
    if (window.prefix !== undefined) return { limited: false, resetAt };
    const { success } = await this.bindings[window.operation].limit({ key });
    return { limited: !success, resetAt };
  }

  /** A key no caller has: the binding answering at all is what counts. */
  async ping(): Promise<void> {
    await this.bindings.ip.limit({ key: 'ping' });
  }
}
