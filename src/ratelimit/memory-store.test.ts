import { describe, expect, it } from 'vitest';
import { limiterConformance, ManualClock } from '../../test/support/limiter-conformance.js';
import { MemoryLimiterStore } from './memory-store.js';

limiterConformance('in-process', { create: (clock) => new MemoryLimiterStore(clock) });

describe('MemoryLimiterStore memory bound', () => {
  it('drops the counters of expired windows', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    for (let i = 0; i < 1000; i++) store.hit(`source-${i}`, 60_000);
    expect(store.size).toBe(1000);
    clock.advance(60_000);
    store.hit('late', 60_000);
    expect(store.size).toBe(1);
  });

  it('keeps live windows through a sweep', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    store.hit('old', 60_000);
    clock.advance(30_000);
    store.hit('young', 60_000);
    clock.advance(30_000);
    store.hit('trigger', 60_000);
    expect(store.size).toBe(2);
    expect((store.hit('young', 60_000)).count).toBe(2);
  });
});
