import { describe, expect, it } from 'vitest';
import { confidenceOf, joinProbes, lowerConfidence, MAD, movingAverages, noProbes, p90, responsiveness, rpmClass, saturated, trimmedMean } from './rpm.js';

describe('the trimmed mean', () => {
  it('leaves out the slowest 5% and averages the rest (one of twenty here)', () => {
    const values = [...Array<number>(19).fill(10), 1_000];
    expect(trimmedMean(values)).toBe(10);
    // Under twenty samples, 5% is less than one: none is left out.
    expect(trimmedMean([10, 20])).toBe(15);
    expect(trimmedMean([])).toBeUndefined();
  });
});

describe('responsiveness in RPM', () => {
  it('averages the new connections\' RPM (60 000 over the mean of TCP, TLS and HTTP) and the loaded connections\' (60 000 over HTTP)', () => {
    // New connections: TCP 20, TLS 20, HTTP 20 ms: 3000 RPM. Loaded connections: 300 ms: 200 RPM. Average: 1600.
    const times = { tcp: [20, 20], tls: [20, 20], http: [20, 20], self: [300, 300] };
    expect(responsiveness(times)).toBeCloseTo(1_600, 6);
  });

  it('without TLS the new connections\' figure is over TCP and HTTP alone; with one kind only, that kind\'s', () => {
    expect(responsiveness({ tcp: [10], tls: [], http: [30], self: [60] })).toBeCloseTo((60_000 / 20 + 60_000 / 60) / 2, 6);
    expect(responsiveness({ tcp: [], tls: [], http: [], self: [100] })).toBeCloseTo(600, 6);
    expect(responsiveness({ tcp: [10], tls: [10], http: [10], self: [] })).toBeCloseTo(6_000, 6);
    expect(responsiveness(noProbes())).toBeUndefined();
  });

  it('by the 90th percentile as well, for rpm_p90', () => {
    const slow = Array.from({ length: 10 }, (_, i) => 100 + i * 100);
    const times = { tcp: slow, tls: slow, http: slow, self: slow };
    expect(responsiveness(times, p90)).toBeCloseTo(60_000 / 910, 6);
    expect(responsiveness(times, p90)).toBeLessThan(responsiveness(times) ?? 0);
  });

  it('joins several intervals\' probes', () => {
    const a = { tcp: [1], tls: [2], http: [3], self: [4] };
    expect(joinProbes([a, a])).toEqual({ tcp: [1, 1], tls: [2, 2], http: [3, 3], self: [4, 4] });
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
