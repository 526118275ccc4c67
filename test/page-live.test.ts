// The page's live rate (web/live-rate.ts): bits per second over the last second of bytes counted.
import { describe, expect, it } from 'vitest';
import { LIVE_WINDOW_MS, LiveRate } from '../web/live-rate.js';

describe('the live rate', () => {
  it('is nothing before the first byte', () => {
    expect(new LiveRate().bps(1000)).toBeUndefined();
  });

  it('is the bytes of the last second, over the time since the first byte while that is shorter', () => {
    const rate = new LiveRate();
    // 125 kB every 100 ms: 10 Mbit/s.
    for (let t = 0; t <= 2000; t += 100) rate.add(125_000, 10_000 + t);
    // Over the last second: the 10 chunks after 11_000 (the one at 11_000 is a window old).
    expect(rate.bps(12_000)).toBeCloseTo(10e6, 0);
    const young = new LiveRate();
    young.add(125_000, 0);
    young.add(125_000, 100);
    young.add(125_000, 200);
    // 375 kB in the 250 ms since the first byte.
    expect(young.bps(250)).toBeCloseTo((375_000 * 8) / 0.25, 0);
  });

  it('falls to nothing once no byte came within the window', () => {
    const rate = new LiveRate();
    rate.add(1000, 0);
    // 1000 bytes in the 500 ms since the first byte.
    expect(rate.bps(500)).toBeCloseTo((1000 * 8) / 0.5, 6);
    expect(rate.bps(LIVE_WINDOW_MS + 1)).toBeUndefined();
  });

  it('ignores a count of no bytes', () => {
    const rate = new LiveRate();
    rate.add(0, 0);
    expect(rate.bps(100)).toBeUndefined();
  });
});
