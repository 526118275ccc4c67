import type { Clock } from '../services.js';
import type { LimiterStore, WindowHit } from './store.js';

interface Entry {
  count: number;
  resetAt: number;
}

/**
 * In-process fixed-window counters. Memory is bounded by the live windows: expired entries are
 * dropped by a sweep that runs at most once per `sweepEveryMs`, so a key that never comes back
 * does not stay.
 */
export class MemoryLimiterStore implements LimiterStore {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #sweepEveryMs: number;
  #nextSweep: number;

  constructor(clock: Clock, sweepEveryMs = 10_000) {
    this.#clock = clock;
    this.#sweepEveryMs = sweepEveryMs;
    this.#nextSweep = clock.now() + sweepEveryMs;
  }

  hit(key: string, windowMs: number): WindowHit {
    return this.hitAt(key, windowMs, this.#clock.now());
  }

  /**
   * A hit at a time the caller names: the primary process of a cluster counts for its workers
   * on their clocks (one machine, one clock). Redis, shared across machines, uses its own.
   */
  hitAt(key: string, windowMs: number, now: number): WindowHit {
    if (now >= this.#nextSweep) this.#sweep(now);
    let entry = this.#entries.get(key);
    if (entry === undefined || now >= entry.resetAt) {
      entry = { count: 0, resetAt: now + windowMs };
      this.#entries.set(key, entry);
    }
    entry.count += 1;
    return { count: entry.count, resetAt: entry.resetAt };
  }

  /** Live entries (for tests of the memory bound and for metrics). */
  get size(): number {
    return this.#entries.size;
  }

  #sweep(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now >= entry.resetAt) this.#entries.delete(key);
    }
    this.#nextSweep = now + this.#sweepEveryMs;
  }
}
