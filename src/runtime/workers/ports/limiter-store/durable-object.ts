import { DurableObject } from 'cloudflare:workers';
import type { Clock } from '../../../../core/ports/clock.js';
import type { SharedStore } from '../../../../core/ratelimit/fallback-store.js';
import type { WindowHit } from '../../../../core/ports/limiter-store.js';

interface Window {
  count: number;
  resetAt: number;
}

/**
 * One fixed-window counter per (operation, keyed hash of the source): a Durable Object is a
 * single thread in one place, so the count is exact and global (docs/api.md, "Rate limits"), and
 * it knows what remains. The window is kept in the object's storage so that an eviction does
 * not forgive a caller, and an alarm at the window's end deletes it: nothing about a source
 * outlives its window. The object's name is already a keyed hash, never an address.
 */
export class RateLimitCounter extends DurableObject {
  /**
   * Counts one hit at `now` (the calling Worker's clock: one counter, one time line per key, and
   * tests can move it).
   */
  async hit(windowMs: number, now: number): Promise<WindowHit> {
    const storage = this.ctx.storage;
    let window = await storage.get<Window>('window');
    if (window === undefined || now >= window.resetAt) {
      window = { count: 0, resetAt: now + windowMs };
      // The alarm runs on this object's clock: it only has to come after the window ends.
      await storage.setAlarm(Date.now() + windowMs);
    }
    window.count += 1;
    await storage.put('window', window);
    return { count: window.count, resetAt: window.resetAt };
  }

  /** Answers, so a Worker that lost the objects can tell when they are back. */
  ping(): boolean {
    return true;
  }

  /** The window is over: forget it (a window opened since has moved the alarm on). */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}

/** The limiter store over those objects; the object is found by name from the key. */
export class DurableObjectLimiterStore implements SharedStore {
  readonly name = 'durable-object';

  constructor(
    private readonly namespace: DurableObjectNamespace<RateLimitCounter>,
    private readonly clock: Clock,
  ) {}

  hit(key: string, windowMs: number): Promise<WindowHit> {
    const stub = this.namespace.get(this.namespace.idFromName(key));
    return stub.hit(windowMs, this.clock.now());
  }

  async ping(): Promise<void> {
    await this.namespace.get(this.namespace.idFromName('ping')).ping();
  }
}
