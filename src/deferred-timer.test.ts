import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeferredTimer } from './deferred-timer.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('DeferredTimer', () => {
  it('hands the wait and the work to defer as one promise that settles when the work is done', async () => {
    vi.useFakeTimers();
    const deferred: Promise<unknown>[] = [];
    const timer = new DeferredTimer((p) => deferred.push(p));
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

  it('is lost when its time is long past and it never ran (a runtime ended the work)', () => {
    vi.useFakeTimers();
    const timer = new DeferredTimer(() => undefined);
    timer.start(1_000, () => undefined);
    expect(timer.lost()).toBe(false);
    // The clock moves on while the timer never fires, as when Workers drop deferred work.
    vi.setSystemTime(Date.now() + 1_000 + 5_001);
    expect(timer.lost()).toBe(true);
  });

  it('cancel settles the deferred promise at once and the work never runs', async () => {
    const deferred: Promise<unknown>[] = [];
    const timer = new DeferredTimer((p) => deferred.push(p));
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
