// The limiter store port: a fixed-window counter per key, and the operations a request is counted
// against (the keys are `operation:keyed-hash`). Its conformance suite is
// limiter-store.conformance.ts beside it; every store runs it.

/**
 * The limited operations and their per-source limits per 60 s window: the contract's four, and
 * four additions (docs/api.md, "Envelope, routes and limits"): `speedtest` for the speed-test
 * targets, `rpm` for the responsiveness endpoints, `turn` for TURN credentials and `port` for the
 * port check.
 */
export const OPERATIONS = ['ip', 'dns', 'probe', 'events', 'speedtest', 'rpm', 'turn', 'port'] as const;
export type Operation = (typeof OPERATIONS)[number];
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
 * Port: a fixed-window counter store (in-process, shared by worker threads, Redis, a Durable Object, or
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
