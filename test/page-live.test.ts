// The page's live rate (web/live-rate.ts): bits per second over the last second of what the
// running direction counted, read between the counts as the direction's figure is.
import { describe, expect, it } from 'vitest';
import { measureDirection, PROFILES } from '../src/common/speedtest/working.js';
import { LIVE_WINDOW_MS, liveBps } from '../web/live-rate.js';

describe('the live rate', () => {
  it('is nothing before the first count', () => {
    expect(liveBps([])).toBeUndefined();
  });

  it('is the bytes of the second before the last count, over the time since the start while that is shorter', () => {
    // 125 kB every 100 ms: 10 Mbit/s.
    const steady = Array.from({ length: 21 }, (_, i) => ({ atMs: 100 * (i + 1), bytes: 125_000 * (i + 1) }));
    expect(liveBps(steady)).toBeCloseTo(10e6, 0);
    // 375 kB in the 300 ms since the start.
    expect(liveBps(steady.slice(0, 3))).toBeCloseTo((375_000 * 8) / 0.3, 0);
  });

  it('ends at the last count, not the clock: an upload counted as each transfer ends reads no slower between them', () => {
    // Uploads of 1.25 MB ending every 500 ms: 20 Mbit/s, whenever it is read.
    const uploads = Array.from({ length: 8 }, (_, i) => ({ atMs: 500 * (i + 1), bytes: 1_250_000 * (i + 1) }));
    expect(liveBps(uploads)).toBeCloseTo(20e6, 0);
    expect(LIVE_WINDOW_MS).toBe(1000);
  });

  it('once the rate is steady, is within a tenth of the figure the direction reports', () => {
    // A 50 Mbit/s link with a sawtooth of ±5% in each 250 ms, counted every 15 ms for 6 s.
    const progress = [];
    let bytes = 0;
    for (let at = 15; at <= 6000; at += 15) {
      bytes += (50e6 / 8) * 0.015 * (Math.floor(at / 250) % 2 === 0 ? 1.05 : 0.95);
      progress.push({ atMs: at, bytes });
    }
    const reported = measureDirection(progress, [], 6000, PROFILES.full).sustained?.bps ?? 0;
    expect(Math.abs((liveBps(progress) ?? 0) - reported) / reported).toBeLessThan(0.1);
  });
});
