import { describe, expect, it } from 'vitest';
import { familyDifference } from './family-difference.js';
import { INTERVAL_MS, windowSpread, type DirectionMeasure } from './working.js';

/** A direction whose window is its last `windowIntervals` intervals of `mbps`, the figure their mean. */
function direction(mbps: number[], windowIntervals: number): DirectionMeasure {
  const rates = mbps.map((m) => m * 1e6);
  const inWindow = rates.slice(rates.length - windowIntervals);
  const bps = inWindow.reduce((a, b) => a + b, 0) / inWindow.length;
  const startMs = (rates.length - windowIntervals) * INTERVAL_MS;
  const endMs = rates.length * INTERVAL_MS;
  return { sustained: { bps, startMs, endMs, bytes: (bps / 8) * ((endMs - startMs) / 1000), steady: true }, burst: undefined, loaded: undefined, rates };
}

describe('windowSpread', () => {
  it('is the lowest and highest one-second average inside the window, the ramp before it left out', () => {
    // A ramp (1, 2) outside the window; in it the one-second averages are 11, 11, 11, 11 and 9 (the last holds the 6).
    const d = direction([1, 2, 10, 10, 10, 14, 10, 10, 10, 6], 8);
    const spread = windowSpread(d);
    expect(spread).toEqual({ lowBps: 9e6, highBps: 11e6 });
  });

  it('is undefined for a window shorter than a second, or nothing counted', () => {
    expect(windowSpread(direction([10, 10, 10], 3))).toBeUndefined();
    expect(windowSpread({ sustained: undefined, burst: undefined, loaded: undefined, rates: [] })).toBeUndefined();
  });
});

describe('familyDifference', () => {
  it('a difference larger than either run moved by on its own is beyond the spread', () => {
    const four = direction([20, 21, 19, 20, 20, 21, 19, 20], 8);
    const six = direction([50, 49, 51, 50, 50, 49, 51, 50], 8);
    expect(familyDifference(four, six)).toMatchObject({ ipv4: { bps: 20e6 }, ipv6: { bps: 50e6 }, beyondSpread: true });
  });

  it('a figure within the other run\'s own spread is not: the runs cannot tell the families apart', () => {
    // IPv4 swings 10 to 30 within its window; IPv6's 22 lies inside that swing.
    const four = direction([10, 10, 10, 10, 30, 30, 30, 30], 8);
    const six = direction([22, 22, 22, 22, 22, 22, 22, 22], 8);
    expect(familyDifference(four, six)?.beyondSpread).toBe(false);
  });

  it('is undefined when a family did not measure the direction', () => {
    expect(familyDifference(direction([20, 20, 20, 20], 4), undefined)).toBeUndefined();
  });
});
