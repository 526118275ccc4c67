// The clock port: what time it is, and work that outlives the response it was started by. Its
// conformance suite is clock.conformance.ts beside it; every runtime's clock and defer run it.

/**
 * Work that must outlive the response it was started by (a batch to a collector, a recovery
 * probe). Workers end an isolate's work with the response unless it is handed to `waitUntil`;
 * a Node process lives on, so there it only has to not be lost.
 */
export type Defer = (work: Promise<unknown>) => void;

export interface Clock {
  /** Wall-clock milliseconds since the epoch (for timestamps and rate-limit windows). */
  now(): number;
}

/** The platform's wall clock: `Date.now()` on Node and on Workers alike. */
export const SYSTEM_CLOCK: Clock = { now: () => Date.now() };
