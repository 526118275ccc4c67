import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeferredTimer } from './deferred-timer.js';

/** A wall clock moved by hand, apart from the timers: a runtime that drops a timer moves only this. */
const handClock = () => {
  const clock = { at: 1_700_000_000_000, now: () => clock.at };
  return clock;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('DeferredTimer', () => {
  it('hands the wait and the work to defer as one promise that settles when the work is done', async () => {
    vi.useFakeTimers();
    const deferred: Promise<unknown>[] = [];
    const timer = new DeferredTimer((p) => deferred.push(p), handClock());
    let ran = false;
    timer.start(1_000, () => {
      ran = true;
    });
    expect(deferred).toHaveLength(1);
    expect(timer.pending).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    await deferred[0];
    expect(ran).toBe(true);
    expect(timer.pending).toBe(false);
  });

  it('is due by a time at or after the one it was started for, until it runs', async () => {
    vi.useFakeTimers();
    const clock = handClock();
    const timer = new DeferredTimer(() => undefined, clock);
    expect(timer.dueBy(clock.at + 1_000)).toBe(false);
    timer.start(200, () => undefined);
    expect(timer.dueBy(clock.at + 199)).toBe(false);
    expect(timer.dueBy(clock.at + 200)).toBe(true);
    await vi.advanceTimersByTimeAsync(200);
    expect(timer.dueBy(clock.at + 200)).toBe(false);
  });

  it('is lost when its time is long past and it never ran (a runtime ended the work)', () => {
    vi.useFakeTimers();
    const clock = handClock();
    const timer = new DeferredTimer(() => undefined, clock);
    timer.start(1_000, () => undefined);
    clock.at += 1_000 + 5_000;
    expect(timer.lost()).toBe(false);
    // The clock moves on while the timer never fires, as when Workers drop deferred work.
    clock.at += 1;
    expect(timer.lost()).toBe(true);
  });

  it('cancel settles the deferred promise at once and the work never runs', async () => {
    const deferred: Promise<unknown>[] = [];
    const timer = new DeferredTimer((p) => deferred.push(p), handClock());
    let ran = false;
    timer.start(60_000, () => {
      ran = true;
    });
    timer.cancel();
    await deferred[0];
    expect(ran).toBe(false);
    expect(timer.pending).toBe(false);
  });
});
