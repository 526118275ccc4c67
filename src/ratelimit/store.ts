/** Port: a fixed-window counter store (in-process now; Redis and cluster stores behind the same type). */
export interface WindowHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** When the current window ends, in epoch milliseconds. */
  resetAt: number;
}

export interface LimiterStore {
  /**
   * Counts one hit for `key`. A key's window starts with its first hit and lasts `windowMs`;
   * the next hit after it ends opens a new window at count 1. An in-process store answers
   * synchronously, so the request path allocates no promise for it.
   */
  hit(key: string, windowMs: number): WindowHit | Promise<WindowHit>;
}
