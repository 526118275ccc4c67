import { describe, expect, it } from 'vitest';
import { limiterConformance } from '../ports/limiter-store.conformance.js';
import { MemoryLimiterStore } from './memory-store.js';
import { ManualClock } from '../ports/clock.conformance.js';

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

describe('MemoryLimiterStore table', () => {
  it('counts 50 000 distinct keys apart, through growth and sweeps', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    // Three hits for every key, spread over time so sweeps run while the table holds them all.
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < 50_000; i++) expect(store.hit(`ip:source-${String(i)}`, 60_000).count).toBe(round);
      clock.advance(5_000);
    }
    expect(store.size).toBe(50_000);
    expect(store.capacity).toBeLessThanOrEqual(131_072);
  });

  it('removes expired windows and keeps every live one findable around them', () => {
    // Old and young keys interleaved, so removals happen inside clusters and shift entries back.
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    for (let i = 0; i < 20_000; i++) store.hit(`old-${String(i)}`, 10_000);
    clock.advance(5_000);
    for (let i = 0; i < 20_000; i++) store.hit(`young-${String(i)}`, 60_000);
    clock.advance(6_000); // the old windows have ended; the next hit sweeps them
    store.hit('young-0', 60_000);
    expect(store.size).toBe(20_000);
    for (let i = 1; i < 20_000; i++) expect(store.hit(`young-${String(i)}`, 60_000).count).toBe(2);
    // An old key opens a new window at 1.
    expect(store.hit('old-7', 10_000).count).toBe(1);
  });

  it('grows by half once past three quarters full, and finds every key in a table of that size', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    for (let i = 0; i < 768; i++) store.hit(`ip:k-${String(i)}`, 60_000);
    expect(store.capacity).toBe(1024);
    store.hit('ip:k-768', 60_000);
    expect(store.capacity).toBe(1536);
    for (let i = 0; i <= 768; i++) expect(store.hit(`ip:k-${String(i)}`, 60_000).count).toBe(2);
  });

  it('shrinks once most windows have ended', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    for (let i = 0; i < 100_000; i++) store.hit(`k-${String(i)}`, 60_000);
    const peak = store.capacity;
    clock.advance(60_000);
    store.hit('trigger', 60_000);
    expect(store.size).toBe(1);
    expect(store.capacity).toBeLessThan(peak);
  });
});

describe('MemoryLimiterStore over months', () => {
  it('counts for a clock that names a time before the table began (a caller clock behind the table)', () => {
    const store = new MemoryLimiterStore(new ManualClock(1_800_000_000_000));
    expect(store.hitAt('ip:early', 60_000, 1_700_000_000_000)).toEqual({ count: 1, resetAt: 1_700_000_060_000 });
    expect(store.hitAt('ip:early', 60_000, 1_700_000_001_000)).toEqual({ count: 2, resetAt: 1_700_000_060_000 });
    expect(store.hitAt('ip:early', 60_000, 1_700_000_060_000)).toEqual({ count: 1, resetAt: 1_700_000_120_000 });
  });

  it('keeps every window end exact past the 49 days its 32-bit slots hold, a live window across the epoch moving', () => {
    const day = 86_400_000;
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 1_000);
    const started = clock.now();
    // A window opened just before the epoch moves (24.86 days in), and hit again just after.
    clock.advance(2 ** 31 - 3_600_000 - 10_000);
    const opened = store.hit('ip:across', 60_000);
    clock.advance(20_000);
    store.hit('ip:trigger', 60_000);
    expect(store.hit('ip:across', 60_000)).toEqual({ count: 2, resetAt: opened.resetAt });
    // Far past what 32 bits of milliseconds from the start would hold.
    for (const days of [30, 50, 120]) {
      clock.advance(started + days * day - clock.now());
      const now = clock.now();
      expect(store.hit(`ip:late-${String(days)}`, 60_000)).toEqual({ count: 1, resetAt: now + 60_000 });
      clock.advance(1_000);
      expect(store.hit(`ip:late-${String(days)}`, 60_000)).toEqual({ count: 2, resetAt: now + 60_000 });
    }
  });
});

// However many distinct sources arrive, the table stops at its bound; a source counted
// before a flood keeps its exact count, and newcomers past the bound share one window per
// operation (and prefix), so they are refused together rather than let through.
describe('MemoryLimiterStore under a flood of distinct sources', () => {
  it('stops at its bound; a source counted before keeps its exact count; newcomers share one window per operation and prefix', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 10_000, 1024);
    for (let i = 0; i < 5; i++) store.hit('ip:known', 60_000);
    for (let i = 0; i < 10_000; i++) store.hit(`ip:flood-${String(i)}`, 60_000);
    clock.advance(2_000);
    expect(store.capacity).toBe(1024);
    expect(store.size).toBe(768);
    expect(store.hit('ip:known', 60_000).count).toBe(6);
    // The flood's last newcomer is one of 10 000 - 767 in the shared window; another operation,
    // and a wider prefix of the same one, have windows of their own.
    expect(store.hit('ip:newcomer', 60_000).count).toBe(10_000 - 767 + 1);
    expect(store.hit('dns:newcomer', 60_000).count).toBe(1);
    expect(store.hit('ip/56:newcomer', 60_000).count).toBe(1);
    expect(store.overflowHits).toBe(10_000 - 767 + 3);
    // A source tracked before the table filled is still counted on its own.
    expect(store.hit('ip:flood-0', 60_000).count).toBe(2);
  });

  it('tracks newcomers on their own again once windows end and free their slots', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock, 10_000, 1024);
    for (let i = 0; i < 2_000; i++) store.hit(`ip:flood-${String(i)}`, 60_000);
    clock.advance(60_001);
    const before = store.overflowHits;
    expect(store.hit('ip:after', 60_000).count).toBe(1);
    expect(store.hit('ip:after', 60_000).count).toBe(2);
    expect(store.overflowHits).toBe(before);
  });

  it('holds 32 MiB at most after two million distinct sources, with the one counted before exact', () => {
    const clock = new ManualClock();
    const store = new MemoryLimiterStore(clock);
    for (let i = 0; i < 3; i++) store.hit('ip:known', 60_000);
    // Two million distinct sources within one window: a million fit, the rest overflow.
    for (let i = 0; i < 2_000_000; i++) {
      store.hit(`ip:${String(i)}`, 60_000);
      if (i % 100_000 === 0) clock.advance(1_000);
    }
    const bytes = store.capacity * 16;
    expect(bytes).toBeLessThanOrEqual(32 * 1024 * 1024);
    expect(store.size).toBe(1_572_864);
    expect(store.hit('ip:known', 60_000).count).toBe(4);
    expect(store.overflowHits).toBe(2_000_000 - (1_572_864 - 1));
  });
});
