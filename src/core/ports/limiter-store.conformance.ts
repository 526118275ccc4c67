// The limiter store port's conformance suite (limiter-store.ts): one set of cases every store runs,
// so none can drift. Counting stores: in-process (src/core/ratelimit/memory-store.test.ts), the
// table the worker threads share (src/core/ratelimit/shared-table.test.ts), Redis, Redis behind the in-process fallback
// (test/http/shared-limits.test.ts), a Durable Object (test/workers/limits.test.ts); verdict
// stores: Workers' rate-limiting binding (test/workers/limits.test.ts).
import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.conformance.js';
import type { LimiterStore, WindowHit, WindowVerdict } from './limiter-store.js';

interface StoreFactory {
  /** A fresh, empty store reading time from `clock`. */
  create(clock: ManualClock): Promise<LimiterStore> | LimiterStore;
  /** Releases whatever `create` opened. */
  dispose?(store: LimiterStore): Promise<void> | void;
}

/** A counting store's answer; fails the test if the store gave a bare verdict instead. */
function counted(hit: WindowHit | WindowVerdict): WindowHit {
  if (!('count' in hit)) throw new Error(`a counting store answered without a count: ${JSON.stringify(hit)}`);
  return hit;
}

export function limiterConformance(name: string, factory: StoreFactory): void {
  describe(`${name} limiter store conformance`, () => {
    const withStore = async (fn: (store: LimiterStore, clock: ManualClock) => Promise<void>) => {
      const clock = new ManualClock();
      const store = await factory.create(clock);
      try {
        await fn(store, clock);
      } finally {
        await factory.dispose?.(store);
      }
    };

    it('counts hits within one window from 1', () =>
      withStore(async (store, clock) => {
        const first = counted(await store.hit('k', 60_000));
        expect(first).toEqual({ count: 1, resetAt: clock.now() + 60_000 });
        clock.advance(10_000);
        const second = counted(await store.hit('k', 60_000));
        expect(second.count).toBe(2);
        expect(second.resetAt).toBe(first.resetAt);
      }));

    it('keeps keys apart', () =>
      withStore(async (store) => {
        await store.hit('a', 60_000);
        await store.hit('a', 60_000);
        expect(counted(await store.hit('b', 60_000)).count).toBe(1);
        expect(counted(await store.hit('a', 60_000)).count).toBe(3);
      }));

    it('opens a new window at count 1 once the old one has ended', () =>
      withStore(async (store, clock) => {
        for (let i = 0; i < 5; i++) await store.hit('k', 60_000);
        clock.advance(59_999);
        expect(counted(await store.hit('k', 60_000)).count).toBe(6);
        clock.advance(1);
        const fresh = await store.hit('k', 60_000);
        expect(fresh).toEqual({ count: 1, resetAt: clock.now() + 60_000 });
      }));

    it('counts concurrent hits exactly once each', () =>
      withStore(async (store) => {
        const results = await Promise.all(Array.from({ length: 50 }, async () => store.hit('burst', 60_000)));
        expect(results.map((r) => counted(r).count).sort((x, y) => x - y)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      }));
  });
}

/**
 * The cases a store that keeps its own limit and answers only yes or no (Workers' rate-limiting
 * binding) can be held to: `limit` hits pass, the next is refused, keys are apart, and a reset
 * time within the window is given. Its window is the platform's, so it is not moved by a clock.
 */
export function verdictConformance(name: string, factory: { create(): LimiterStore; limit: number }): void {
  describe(`${name} limiter store conformance (verdicts)`, () => {
    const verdict = (hit: WindowHit | WindowVerdict): WindowVerdict => {
      if ('count' in hit) throw new Error('a verdict store answered with a count');
      return hit;
    };

    it('passes the limit and refuses the hit after it, with a reset inside the window', async () => {
      const store = factory.create();
      const key = `k${String(Math.random())}`;
      for (let i = 0; i < factory.limit; i++) expect(verdict(await store.hit(key, 60_000)).limited).toBe(false);
      const over = verdict(await store.hit(key, 60_000));
      expect(over.limited).toBe(true);
      expect(over.resetAt).toBeGreaterThan(Date.now());
      expect(over.resetAt).toBeLessThanOrEqual(Date.now() + 60_000);
    });

    it('keeps keys apart', async () => {
      const store = factory.create();
      const a = `a${String(Math.random())}`;
      for (let i = 0; i <= factory.limit; i++) await store.hit(a, 60_000);
      expect(verdict(await store.hit(`b${String(Math.random())}`, 60_000)).limited).toBe(false);
      expect(verdict(await store.hit(a, 60_000)).limited).toBe(true);
    });
  });
}
