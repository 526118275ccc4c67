// The limiter table worker threads share (shared-table.ts, MemoryLimiterStore over it): the
// conformance cases, one window counted by two stores on one buffer, a fixed size under a flood,
// the lock taken and given back, a holder that died freed, a wait that would never end failed.
// Threads counting at once: test/http/shared-limits.test.ts.
import { describe, expect, it } from 'vitest';
import { limiterConformance } from '../ports/limiter-store.conformance.js';
import { ManualClock } from '../ports/clock.conformance.js';
import { MemoryLimiterStore } from './memory-store.js';
import { createSharedTable, freeLockOf, LockTimeoutError, TableLock, tableViews } from './shared-table.js';

const onShared = (clock: ManualClock, buffer: SharedArrayBuffer, holder: number, sweepEveryMs?: number) => new MemoryLimiterStore(clock, sweepEveryMs, undefined, { buffer, holder });

limiterConformance('shared table (worker threads)', { create: (clock) => onShared(clock, createSharedTable(1024), 1) });

describe('a limiter table in shared memory', () => {
  it('two stores on one buffer count one window per key, and the first to arrive begins the bookkeeping', () => {
    const clock = new ManualClock();
    const buffer = createSharedTable(1024);
    const a = onShared(clock, buffer, 1);
    clock.advance(5_000);
    const b = onShared(clock, buffer, 2);
    const counts = [a, b, a, b, b].map((s) => s.hit('ip:one', 60_000).count);
    expect(counts).toEqual([1, 2, 3, 4, 5]);
    expect(b.hit('ip:two', 60_000).count).toBe(1);
    // Both see the live windows and the window's end set by the first hit.
    expect([a.size, b.size]).toEqual([2, 2]);
    expect(a.hit('ip:one', 60_000).resetAt).toBe(b.hit('ip:one', 60_000).resetAt);
    clock.advance(60_000);
    expect(b.hit('ip:one', 60_000).count).toBe(1);
  });

  it('keeps its size under a flood: newcomers past three quarters share an overflow window, the buffer is never replaced', () => {
    const clock = new ManualClock();
    const buffer = createSharedTable(1024);
    const store = onShared(clock, buffer, 1);
    for (let i = 0; i < 2_000; i++) store.hit(`ip:source-${String(i)}`, 60_000);
    expect(store.capacity).toBe(1024);
    expect(store.size).toBe(768);
    expect(store.overflowHits).toBe(2_000 - 768);
    // After the windows end a sweep frees them, and the table keeps its size (others hold views of it).
    clock.advance(60_000);
    store.hit('ip:after', 60_000);
    expect(store.size).toBe(1);
    expect(store.capacity).toBe(1024);
    expect(tableViews(buffer).resetAt.length).toBe(1024);
  });

  it('sweeps on its timer only once its windows fill an eighth of its slots', () => {
    const clock = new ManualClock();
    const store = onShared(clock, createSharedTable(1024), 1, 1_000);
    for (let i = 0; i < 127; i++) store.hit(`ip:source-${String(i)}`, 1_000);
    clock.advance(2_000);
    // 128 of 1024 after this hit: no sweep yet, the ended windows still counted.
    store.hit('ip:one-more', 1_000);
    expect(store.size).toBe(128);
    clock.advance(2_000);
    // Now an eighth: the sweep removes every ended window.
    store.hit('ip:last', 1_000);
    expect(store.size).toBe(1);
  });

  it('gives the lock back after every hit', () => {
    const buffer = createSharedTable(1024);
    const store = onShared(new ManualClock(), buffer, 7);
    store.hit('ip:one', 60_000);
    expect(tableViews(buffer).lock[0]).toBe(0);
  });

  it('frees a lock whose holder died holding it, and only that holder\'s', () => {
    const buffer = createSharedTable(1024);
    const views = tableViews(buffer);
    new TableLock(views, 5).acquire();
    expect(freeLockOf(views, 6)).toBe(false);
    // 0 names no holder (a thread that has ended reads its id as -1: -1 + 1).
    expect(freeLockOf(views, 0)).toBe(false);
    expect(views.lock[0]).toBe(5);
    expect(freeLockOf(views, 5)).toBe(true);
    expect(views.lock[0]).toBe(0);
    // Counting goes on.
    expect(onShared(new ManualClock(), buffer, 6).hit('ip:one', 60_000).count).toBe(1);
  });

  it('fails a wait for a lock that stays taken past the timeout, naming the holder, instead of waiting for ever', () => {
    const views = tableViews(createSharedTable(1024));
    new TableLock(views, 5).acquire();
    const started = Date.now();
    expect(() => { new TableLock(views, 6, 100).acquire(); }).toThrow(LockTimeoutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(() => { new TableLock(views, 6, 100).acquire(); }).toThrow(/taken \(by holder 5\) for over 100 ms/);
    // The lock is still its holder's, and no waiter is left counted.
    expect([views.lock[0], views.lock[1]]).toEqual([5, 0]);
    freeLockOf(views, 5);
    new TableLock(views, 6, 100).acquire();
    expect(views.lock[0]).toBe(6);
  });

  it('refuses a holder id of 0, which the lock reads as free', () => {
    expect(() => new TableLock(tableViews(createSharedTable(1024)), 0)).toThrow(/positive integer/);
  });
});
