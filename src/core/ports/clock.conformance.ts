// The clock port's conformance suite (clock.ts): what time it is, and deferred work. Run by Node's
// clock (src/runtime/node/ports/conformance.test.ts), Workers' (test/workers/ports.test.ts) and the
// suites' own manual clock (below, src/core/ports/in-memory.test.ts).
import { describe, expect, it } from 'vitest';
import type { Clock, Defer } from './clock.js';

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public ms = 1_700_000_000_000) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

interface ClockUnderTest {
  clock: Clock;
  defer: Defer;
  /** Lets `ms` pass for this clock: real time for a real clock, a step for a manual one. */
  pass: (ms: number) => Promise<void> | void;
}

/** 2020-01-01T00:00:00Z: any clock of a running system reads later than this. */
const LONG_AGO_MS = 1_577_836_800_000;

export function clockConformance(name: string, make: () => ClockUnderTest): void {
  describe(`${name} clock conformance`, () => {
    it('reads milliseconds since the epoch', () => {
      const { clock } = make();
      const now = clock.now();
      expect(Number.isFinite(now)).toBe(true);
      expect(now).toBeGreaterThan(LONG_AGO_MS);
      // Milliseconds, not seconds or microseconds: within a century of 2020.
      expect(now).toBeLessThan(LONG_AGO_MS + 100 * 365 * 86_400_000);
    });

    it('never goes back, and moves on by the time that passed', async () => {
      const { clock, pass } = make();
      const first = clock.now();
      expect(clock.now()).toBeGreaterThanOrEqual(first);
      await pass(30);
      expect(clock.now() - first).toBeGreaterThanOrEqual(29);
    });

    it('defer takes work and returns at once, before the work settles, without throwing', async () => {
      const { defer } = make();
      let settled = false;
      const work = new Promise<void>((resolve) => setTimeout(resolve, 20)).then(() => {
        settled = true;
      });
      defer(work);
      expect(settled).toBe(false);
      await work;
      // Work already settled is taken as well.
      expect(() => {
        defer(Promise.resolve());
      }).not.toThrow();
    });
  });
}
