// The speed test's figures against the speed-test library's published rules (@cloudflare/speedtest 1.14,
// internalConfig and defaultConfig): expected values worked out by hand from its thresholds.
import { describe, expect, it } from 'vitest';
import { jitterOf, percentile } from '../statistics.js';
import { latencyOf, qualities } from './latency-quality.js';

describe('percentile, latency and jitter', () => {
  it('interpolates between closest ranks', () => {
    expect(percentile([10, 1, 2, 3, 4, 5, 6, 7, 8, 9], 0.9)).toBeCloseTo(9.1);
    expect(percentile([4], 0.9)).toBe(4);
    expect(percentile([], 0.5)).toBeUndefined();
  });

  it('latency is the median ping; jitter the mean absolute step between consecutive pings', () => {
    expect(latencyOf([5, 1, 3])).toBe(3);
    expect(latencyOf([1, 2, 3, 10])).toBe(2.5);
    // |3-1| + |0-3| + |4-0| = 9 over 3 steps; |3-1| + |4-3| + |4-4| = 3 over 3.
    expect(jitterOf([1, 3, 0, 4])).toBe(3);
    expect(jitterOf([1, 3, 4, 4])).toBe(1);
    expect(jitterOf([7])).toBeUndefined();
  });
});

describe('quality classes', () => {
  it('are pending while an input is missing', () => {
    expect(qualities({ download: 5e8, upload: 5e8, latency: 5, jitter: 1 })).toEqual({ streaming: 'pending', gaming: 'pending', video_call: 'pending' });
    // Gaming needs no download and video calls no download either; streaming does.
    expect(qualities({ latency: 5, jitter: 1, downLoadedLatency: 8 })).toEqual({ streaming: 'pending', gaming: 'great', video_call: 'great' });
  });

  it('add up the speed-test library\'s points per input against its thresholds', () => {
    // latency 5 → 20, loaded increase 3 → 20, packet loss unmeasured → 0 (the speed-test library's default
    // points), download 200 Mbps → 30, jitter 1 → 10. Streaming 70 (great ≥ 60), gaming 40
    // (great ≥ 30), video call 50 (great ≥ 40).
    expect(qualities({ download: 2e8, upload: 2e8, latency: 5, jitter: 1, downLoadedLatency: 8, upLoadedLatency: 6 })).toEqual({ streaming: 'great', gaming: 'great', video_call: 'great' });
    // latency 30 → 5, increase max(60, 45) − 30 = 30 → 5, loss unmeasured → 0, download 20 Mbps
    // → 10, jitter 15 → 5. Streaming 20 (average: 20 ≤ 20 < 40), gaming 10 (poor: 5 ≤ 10 < 15),
    // video call 15 (average: 15 ≤ 15 < 25).
    expect(qualities({ download: 2e7, upload: 1e6, latency: 30, jitter: 15, downLoadedLatency: 60, upLoadedLatency: 45 })).toEqual({ streaming: 'average', gaming: 'poor', video_call: 'average' });
    // The same with none lost, measured: 10 points more each. Streaming 30 (average), gaming 20
    // (average: 15 ≤ 20 < 25), video call 25 (good: 25 ≤ 25 < 40).
    expect(qualities({ download: 2e7, upload: 1e6, latency: 30, jitter: 15, downLoadedLatency: 60, upLoadedLatency: 45, packetLoss: 0 })).toEqual({ streaming: 'average', gaming: 'average', video_call: 'good' });
    // latency 200 → −10, increase 600 → −20, download 0.5 Mbps → 0, jitter 600 → −20: every
    // total is below zero, counted as zero, so bad.
    expect(qualities({ download: 5e5, upload: 5e5, latency: 200, jitter: 600, downLoadedLatency: 800 })).toEqual({ streaming: 'bad', gaming: 'bad', video_call: 'bad' });
    // Boundaries: latency exactly 10 ms is in the second band (10 points); gaming then 10 + 20 = 30,
    // exactly great's threshold.
    expect(qualities({ download: 1e8, latency: 10, jitter: 10, downLoadedLatency: 10 }).gaming).toBe('great');
    // With none lost measured (10): latency 100 → −10, increase 100 → −10: −10 → 0 → bad; 1 ms
    // less each: 0 + 0 + 10 = 10 → poor.
    expect(qualities({ latency: 100, jitter: 0, downLoadedLatency: 200, packetLoss: 0 }).gaming).toBe('bad');
    expect(qualities({ latency: 99, jitter: 0, downLoadedLatency: 198, packetLoss: 0 }).gaming).toBe('poor');
  });

  it('score measured packet loss by the speed-test library\'s bands, and unmeasured loss as no points', () => {
    // The first example above with loss measured: 0.5% is under 1%, 10 points (0 when unmeasured);
    // 60% is −20 points: streaming 20 − 20 + 30 + 20 = 50 (good: 40 ≤ 50 < 60), gaming
    // 20 − 20 + 20 = 20 (average: 15 ≤ 20 < 25), video call 20 + 10 − 20 + 20 = 30 (good: 25 ≤ 30 < 40).
    const measured = { download: 2e8, upload: 2e8, latency: 5, jitter: 1, downLoadedLatency: 8, upLoadedLatency: 6 };
    expect(qualities({ ...measured, packetLoss: 0.005 })).toEqual({ streaming: 'great', gaming: 'great', video_call: 'great' });
    expect(qualities({ ...measured, packetLoss: 0.6 })).toEqual({ streaming: 'good', gaming: 'average', video_call: 'good' });
  });
});
