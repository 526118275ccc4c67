/** What a counting store answers: the exact count, so `RateLimit-Remaining` can be sent. */
export interface WindowHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** When the current window ends, in epoch milliseconds. */
  resetAt: number;
}

/**
 * What a store that keeps its own limit answers (a platform binding that says only yes or no):
 * no count, so `RateLimit-Remaining` is omitted (docs/api.md, "Rate limits").
 */
export interface WindowVerdict {
  /** This hit is over the limit. */
  limited: boolean;
  /** When the window ends, as well as the store can tell, in epoch milliseconds. */
  resetAt: number;
}

/**
 * Port: a fixed-window counter store (in-process, cluster primary, Redis, a Durable Object, or
 * a platform binding). Keys are `operation:keyed-hash` (`limiterKey`).
 */
export interface LimiterStore {
  /**
   * Counts one hit for `key`. A key's window starts with its first hit and lasts `windowMs`;
   * the next hit after it ends opens a new window at count 1. An in-process store answers
   * synchronously, so the request path allocates no promise for it.
   */
  hit(key: string, windowMs: number): WindowHit | WindowVerdict | Promise<WindowHit | WindowVerdict>;
}
