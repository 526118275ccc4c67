import { describe, expect, it } from 'vitest';
import { confidenceOf, joinProbes, lowerConfidence, MAD, movingAverages, noProbes, p90, probeComponents, probeRoundTrips, responsiveness, rpmClass, saturated, trimmedMean, type ProbeTimes } from './rpm.js';

describe('the trimmed mean', () => {
  it('keeps the fastest 95% and averages them (nineteen of twenty here)', () => {
    const values = [...Array<number>(19).fill(10), 1_000];
    expect(trimmedMean(values)).toBe(10);
    // Forty samples: the two slowest go.
    expect(trimmedMean([...Array<number>(38).fill(10), 500, 900])).toBe(10);
    // Under twenty samples, 5% is less than one: none is left out.
    expect(trimmedMean([10, 20])).toBe(15);
    expect(trimmedMean([])).toBeUndefined();
  });
});

const probes = (p: Partial<ProbeTimes>): ProbeTimes => ({ ...noProbes(), ...p });

describe('responsiveness in RPM (the draft\'s formula)', () => {
  it('60 000 over the mean of a new connection\'s round trip (its whole probe over three) and a loaded connection\'s exchange', () => {
    // New connections: 60 ms for TCP, TLS and HTTP, 20 ms a round trip. Loaded connections: 300 ms. 60 000 / 160 = 375,
    // where averaging the two kinds' RPM (3000 and 200) would read 1600.
    const times = probes({ foreign: [60, 60], tcp: [20, 20], tls: [20, 20], http: [20, 20], self: [300, 300] });
    expect(responsiveness(times)).toBeCloseTo(375, 6);
    expect(probeRoundTrips(times)).toEqual({ foreign: 20, self: 300 });
  });

  it('with one kind of probe only, that kind\'s; with none, undefined', () => {
    expect(responsiveness(probes({ self: [100] }))).toBeCloseTo(600, 6);
    expect(responsiveness(probes({ foreign: [30] }))).toBeCloseTo(6_000, 6);
    expect(responsiveness(noProbes())).toBeUndefined();
  });

  it('by the 90th percentile as well, for rpm_p90', () => {
    const slow = Array.from({ length: 10 }, (_, i) => 100 + i * 100);
    const times = probes({ foreign: slow.map((v) => v * 3), self: slow });
    expect(responsiveness(times, p90)).toBeCloseTo(60_000 / 910, 6);
    expect(responsiveness(times, p90)).toBeLessThan(responsiveness(times) ?? 0);
  });

  it('components: each kind\'s trimmed mean, the new connection\'s per round trip', () => {
    const c = probeComponents(probes({ foreign: [90, 30], tcp: [10, 10], tls: [12, 8], http: [30, 40], self: [50] }));
    expect(c).toEqual({ foreignMs: 20, tcpMs: 10, tlsMs: 10, httpMs: 35, selfMs: 50 });
  });

  it('joins several intervals\' probes', () => {
    const a = probes({ foreign: [0], tcp: [1], tls: [2], http: [3], self: [4] });
    expect(joinProbes([a, a])).toEqual({ foreign: [0, 0], tcp: [1, 1], tls: [2, 2], http: [3, 3], self: [4, 4] });
  });
});

describe('saturation and confidence', () => {
  it('moving averages span four intervals', () => {
    expect(movingAverages([1, 2, 3, 4, 5, 6])).toEqual([2.5, 3.5, 4.5]);
  });

  it('a series has saturated when its last four values\' standard deviation is under 5% of the newest', () => {
    expect(saturated([100, 101, 99, 100])).toBe(true);
    expect(saturated([80, 90, 100, 110])).toBe(false);
    // Fewer than four: not yet.
    expect(saturated([100, 100, 100])).toBe(false);
    // Only the last four count.
    expect(saturated([10, 500, 100, 100, 101, 99])).toBe(true);
  });

  it('confidence: low before four intervals, medium without saturation, high with; a test is as sure as its less sure direction', () => {
    expect(confidenceOf(MAD - 1, true)).toBe('low');
    expect(confidenceOf(MAD, false)).toBe('medium');
    expect(confidenceOf(12, true)).toBe('high');
    expect(lowerConfidence('high', 'medium')).toBe('medium');
    expect(lowerConfidence('low', 'high')).toBe('low');
  });

  it('names a figure as the draft does: poor under 300, fair to 1000, good to 6000, excellent above', () => {
    expect([rpmClass(299), rpmClass(300), rpmClass(999), rpmClass(1_000), rpmClass(5_999), rpmClass(6_000)]).toEqual(['poor', 'fair', 'fair', 'good', 'good', 'excellent']);
  });
});
