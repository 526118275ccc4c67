// The working-conditions rules over recorded series. The boosted and plain series are bulk
// downloads timed every 100 ms on links of known shape (tbf on a router namespace, the server
// sending with CUBIC; test/support/shaped-link.ts): a link under continuous load, which is what
// the clients now give the rules. The expected figures come from the series' own reference
// (test/support/burst-reference.ts: the medians of the first second and of the second half),
// never from these rules. The loopback series is `netdiag speedtest`'s own default test over
// loopback (four streams each way, no shaper), recorded from the client.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { burstReference } from '../../../test/support/burst-reference.js';
import { bytesAt, countsUntil, directionDone, liveBps, INTERVAL_MS, MAX_UPLOAD_BYTES, receivedProgress, measureDirection, MIN_BURST_BYTES, nextUploadBytes, probeGapMs, PROFILES, receivedUpload, steadyMs, type LoadProfile, type ByteCount, type Received, type RoundTrip } from './working.js';

/** The recorded bulk transfers last 4.7 to 6.1 s: a profile whose window fits after their bursts. */
const RECORDED: LoadProfile = { maxMs: 4_700, windowMs: 2_000 };

/** A recorded bulk download's 100 ms rates, Mbit/s. */
const bulkSeries = (name: string): number[] => (JSON.parse(readFileSync(new URL(`../../../test/fixtures/speedtest/${name}.json`, import.meta.url), 'utf8')) as { bulk_100ms_mbps: number[] }).bulk_100ms_mbps;

/** A bulk transfer's 100 ms rates (Mbit/s) as the counts a client makes: cumulative bytes every 100 ms. */
function progressOf(mbpsPer100ms: number[]): ByteCount[] {
  let bytes = 0;
  return mbpsPer100ms.map((mbps, i) => ({ atMs: (i + 1) * 100, bytes: (bytes += (mbps * 1e6 * 0.1) / 8) }));
}

const within = (value: number | undefined, reference: number, share: number) => {
  expect(value, 'measured').toBeDefined();
  expect(Math.abs((value ?? 0) - reference) / reference, `${String(value)} against ${String(reference)}`).toBeLessThanOrEqual(share);
};

/** A seeded generator (mulberry32), so a made-up series is the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('the sustained rate and the burst under continuous load, on recorded links', () => {
  it('a plain 20 Mbit/s link: steady, no burst, the rate is the link', () => {
    const series = bulkSeries('plain-20');
    const reference = burstReference(series);
    const progress = progressOf(series);
    const m = measureDirection(progress, [], progress.at(-1)?.atMs ?? 0, RECORDED);
    expect(m.sustained?.steady).toBe(true);
    expect(m.burst).toBeUndefined();
    within((m.sustained?.bps ?? 0) / 1e6, reference.sustainedMbps, 0.05);
  });

  for (const [name, shape] of [
    ['boost-20-40', '20 Mbit/s after a 4 MB bucket at 40'],
    ['boost-100-200', '100 Mbit/s after a 20 MB bucket at 200'],
  ] as const) {
    it(`a boosted link, ${shape}: the window after the burst, the burst named with its peak and size`, () => {
      const series = bulkSeries(name);
      const reference = burstReference(series);
      expect(reference.burstBytes).toBeGreaterThan(MIN_BURST_BYTES);
      const progress = progressOf(series);
      const m = measureDirection(progress, [], progress.at(-1)?.atMs ?? 0, RECORDED);
      within((m.sustained?.bps ?? 0) / 1e6, reference.sustainedMbps, 0.05);
      expect(m.burst).toBeDefined();
      within((m.burst?.peakBps ?? 0) / 1e6, reference.peakMbps, 0.15);
      within(m.burst?.bytes, reference.burstBytes, 0.3);
      // The window starts after the burst: no byte of it counts toward the sustained rate.
      expect(m.sustained?.startMs ?? 0).toBeGreaterThanOrEqual(m.burst?.durationMs ?? Infinity);
    });
  }

  it('a boosted link whose load stalled early (a stream in retransmission backoff): the burst still named', () => {
    // 20 Mbit/s after 4 MB at 40: 0.3 s at 40, 0.9 s at a quarter of it (one lost packet, a 200 ms
    // timeout, then 400), then at 40 until the bucket is spent, then 20 for 8 s.
    const rateAt = (t: number) => (t < 300 ? 40 : t < 1_200 ? 10 : t < 3_000 ? 40 : 20) * 1e6;
    const progress: ByteCount[] = [];
    let bytes = 0;
    for (let at = 10; at <= 10_000; at += 10) progress.push({ atMs: at, bytes: (bytes += (rateAt(at) / 8) * 0.01) });
    const m = measureDirection(progress, [], 10_000, PROFILES.full);
    within(m.sustained?.bps, 20e6, 0.02);
    expect(m.burst).toBeDefined();
  });

  it('a boosted link is not done while the burst still fills the window: steady only after it ends', () => {
    const series = bulkSeries('boost-20-40');
    const progress = progressOf(series);
    // 1.6 s at the peak: by 1.7 s the rate has been the peak's for over a second, which is no window.
    expect(directionDone(progress, [], 1_700, { maxMs: 10_000, windowMs: 1_500 })).toBe(false);
    // Past the burst and 2 s of the sustained rate, a 2 s window is done.
    expect(directionDone(progress, [], 4_000, { maxMs: 10_000, windowMs: 2_000 })).toBe(true);
  });
});

describe('a fast link with noise', () => {
  /** 10 s at about 3 Gbit/s, each 20 ms count moved by up to 40% either way, as loopback on a busy machine does. */
  function noisy(seed: number, slowTail: boolean): ByteCount[] {
    const random = seeded(seed);
    const progress: ByteCount[] = [];
    let bytes = 0;
    for (let at = 20; at <= 10_000; at += 20) {
      const factor = slowTail && at > 9_750 ? 0.05 : 0.6 + 0.8 * random();
      bytes += ((3e9 * factor) / 8) * 0.02;
      progress.push({ atMs: at, bytes });
    }
    return progress;
  }

  it('one slow last stretch moves the rate by no more than its share of the window, and names no burst', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const plain = measureDirection(noisy(seed, false), [], 10_000, PROFILES.full);
      const slow = measureDirection(noisy(seed, true), [], 10_000, PROFILES.full);
      expect(plain.burst, `seed ${String(seed)}`).toBeUndefined();
      expect(slow.burst, `seed ${String(seed)}`).toBeUndefined();
      within(plain.sustained?.bps, 3e9, 0.1);
      // The last 250 ms at 5% of the rate is 5% of a 5 s window: the figure falls by about that, not to the slow transfer.
      const drop = 1 - (slow.sustained?.bps ?? 0) / (plain.sustained?.bps ?? 1);
      expect(drop, `seed ${String(seed)}`).toBeLessThan(0.1);
    }
  });

  it('the figure rests on a whole window whether or not the rate settled', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const m = measureDirection(noisy(seed, false), [], 10_000, PROFILES.full);
      expect((m.sustained?.endMs ?? 0) - (m.sustained?.startMs ?? 0), `seed ${String(seed)}`).toBeGreaterThanOrEqual(PROFILES.full.windowMs);
    }
  });
});

describe('loopback, recorded from `netdiag speedtest` (four streams each way, no shaper, a busy two-core machine)', () => {
  interface Recorded {
    progress: [number, number][];
    round_trips: [number, number][];
    end_ms: number;
  }
  const loopback = JSON.parse(readFileSync(new URL('../../../test/fixtures/speedtest/loopback-cli.json', import.meta.url), 'utf8')) as Record<'download' | 'upload', Recorded>;
  const counts = (r: Recorded): ByteCount[] => r.progress.map(([atMs, bytes]) => ({ atMs, bytes }));
  /** The last `ms` of a series read straight off its counts: bytes over time, no rule. */
  const lastRate = (progress: ByteCount[], ms: number): number => {
    const last = progress.at(-1) ?? { atMs: 0, bytes: 0 };
    const from = [...progress].reverse().find((p) => p.atMs <= last.atMs - ms) ?? { atMs: 0, bytes: 0 };
    return ((last.bytes - from.bytes) * 8 * 1000) / (last.atMs - from.atMs);
  };

  for (const direction of ['download', 'upload'] as const) {
    it(`${direction}: no burst named, the figure the bytes of a whole window over its time`, () => {
      const r = loopback[direction];
      const m = measureDirection(counts(r), r.round_trips.map(([atMs, ms]) => ({ atMs, ms })), r.end_ms, PROFILES.full);
      expect(m.burst).toBeUndefined();
      expect((m.sustained?.endMs ?? 0) - (m.sustained?.startMs ?? 0)).toBeGreaterThanOrEqual(PROFILES.full.windowMs);
      within(m.sustained?.bps, lastRate(counts(r), PROFILES.full.windowMs), 0.1);
      expect(m.loaded?.count).toBeGreaterThanOrEqual(10);
    });

    it(`${direction} with one slow transfer at the end: no burst, the figure moves by that transfer's share`, () => {
      const r = loopback[direction];
      const progress = counts(r);
      const last = progress.at(-1) ?? { atMs: 0, bytes: 0 };
      // One more transfer of 1 MB that took 500 ms: 16 Mbit/s after seconds at gigabits.
      const slow = [...progress, { atMs: last.atMs + 500, bytes: last.bytes + 1_000_000 }];
      const before = measureDirection(progress, [], last.atMs, PROFILES.full);
      const after = measureDirection(slow, [], last.atMs + 500, PROFILES.full);
      expect(after.burst).toBeUndefined();
      const drop = 1 - (after.sustained?.bps ?? 0) / (before.sustained?.bps ?? 1);
      // Half a second of near nothing in a 5 s window: at most about a tenth, never the slow transfer's rate.
      expect(drop).toBeLessThan(0.15);
    });
  }
});

describe('no burst from noise', () => {
  it('a fast first stretch on a link whose rate then swings between a third slower and as fast never settles: no burst', () => {
    // 1.5 s at 40 Mbit/s, then alternating seconds at 28 and 40.
    const rates = [...Array.from({ length: 6 }, () => 40), ...Array.from({ length: 34 }, (_, i) => (Math.floor(i / 4) % 2 === 0 ? 28 : 40))];
    let bytes = 0;
    const progress = rates.map((mbps, i) => ({ atMs: (i + 1) * INTERVAL_MS, bytes: (bytes += (mbps * 1e6 * INTERVAL_MS) / 1000 / 8) }));
    const m = measureDirection(progress, [], rates.length * INTERVAL_MS, PROFILES.full);
    expect(m.sustained?.steady).toBe(false);
    expect(m.burst).toBeUndefined();
  });

  it('an early stretch only a little faster than the window is not a burst, however long', () => {
    // 4.5 s at 23 Mbit/s (15% over, 1.7 MB above), then 20.
    const progress: ByteCount[] = Array.from({ length: 1_000 }, (_, i) => {
      const at = (i + 1) * 10;
      return { atMs: at, bytes: at <= 4_500 ? (at * 23e6) / 8 / 1000 : (4_500 * 23e6) / 8 / 1000 + ((at - 4_500) * 20e6) / 8 / 1000 };
    });
    const m = measureDirection(progress, [], 10_000, PROFILES.full);
    expect(m.sustained?.steady).toBe(true);
    expect(m.burst).toBeUndefined();
  });
});

describe('the window', () => {
  const steadyLink = (mbps: number, ms: number): ByteCount[] => Array.from({ length: ms / 10 }, (_, i) => ({ atMs: (i + 1) * 10, bytes: ((i + 1) * 10 * mbps * 1e6) / 8 / 1000 }));

  it('a direction is done once the rate has been steady for the profile window, and not before', () => {
    const progress = steadyLink(50, 10_000);
    expect(steadyMs(progress, 3_000)).toBeGreaterThanOrEqual(2_750);
    expect(directionDone(progress, [], 4_000, PROFILES.full)).toBe(false);
    expect(directionDone(progress, [], 5_000, PROFILES.full)).toBe(true);
    expect(directionDone(progress, [], 2_500, PROFILES.light)).toBe(true);
  });

  it('a steady stretch shorter than the window (a direction out of time) is read over the last window, not steady', () => {
    // Slow for 6 s, then steady at 50 Mbit/s for 4 s: out of time at 10 s with 4 s steady.
    const progress: ByteCount[] = Array.from({ length: 1_000 }, (_, i) => {
      const at = (i + 1) * 10;
      return { atMs: at, bytes: at <= 6_000 ? (at * 5e6) / 8 / 1000 : (6_000 * 5e6) / 8 / 1000 + ((at - 6_000) * 50e6) / 8 / 1000 };
    });
    const m = measureDirection(progress, [], 10_000, PROFILES.full);
    expect(m.sustained?.steady).toBe(false);
    expect(m.sustained?.startMs).toBe(5_000);
    within(m.sustained?.bps, (5e6 * 1 + 50e6 * 4) / 5, 0.01);
  });

  it('a burst that outlasts half the direction: read as a rate that did not settle, over the last window, no burst named', () => {
    // 20 MB above 100 Mbit/s spent at 128: 5.7 s of burst, then 4.3 s at 100 before the 10 s
    // bound. Less than a window of steady rate is left: the last 5 s hold 0.7 s of the burst.
    const progress: ByteCount[] = Array.from({ length: 1_000 }, (_, i) => {
      const at = (i + 1) * 10;
      const burstMs = 5_700;
      return { atMs: at, bytes: at <= burstMs ? (at * 128e6) / 8 / 1000 : (burstMs * 128e6) / 8 / 1000 + ((at - burstMs) * 100e6) / 8 / 1000 };
    });
    expect(directionDone(progress, [], 9_950, PROFILES.full)).toBe(false);
    const m = measureDirection(progress, [], 10_000, PROFILES.full);
    expect(m.sustained?.steady).toBe(false);
    expect(m.burst).toBeUndefined();
    within(m.sustained?.bps, (0.7 * 128e6 + 4.3 * 100e6) / 5, 0.01);
  });

  it('a rate still creeping up is not done early: ending early asks for a twentieth, not a tenth', () => {
    // From 170 to 188 Mbit/s over 8 s, then level: every one-second average within a tenth.
    const rateAt = (t: number) => (t < 8_000 ? 170 + (18 * t) / 8_000 : 188) * 1e6;
    const progress: ByteCount[] = [];
    let bytes = 0;
    for (let at = 10; at <= 10_000; at += 10) progress.push({ atMs: at, bytes: (bytes += (rateAt(at) / 8) * 0.01) });
    expect(directionDone(progress, [], 6_000, PROFILES.full)).toBe(false);
    // At the bound, the figure is the last window's: within 3% of the level it reached.
    within(measureDirection(progress, [], 10_000, PROFILES.full).sustained?.bps, 186e6, 0.03);
  });

  it('a direction ends at the profile bound whatever the rate does', () => {
    expect(directionDone([], [], PROFILES.full.maxMs, PROFILES.full)).toBe(true);
    expect(directionDone([], [], PROFILES.full.maxMs - 1, PROFILES.full)).toBe(false);
  });

  it('uploads counted as each transfer ends: the time after the last end is not read as a slower link', () => {
    // Four streams each ending a 1.25 MB upload every 500 ms (20 Mbit/s in all), staggered.
    const progress: ByteCount[] = [];
    let bytes = 0;
    for (let at = 125; at <= 8_000; at += 125) progress.push({ atMs: at, bytes: (bytes += 1_250_000 / 4) });
    // Read at 8.4 s: the last upload ended at 8 s, and the 400 ms since hold bytes not yet counted.
    const m = measureDirection(progress, [], 8_400, PROFILES.full);
    within(m.sustained?.bps, 20e6, 0.02);
    expect(m.sustained?.steady).toBe(true);
  });

  it('loaded latency is the median of the round trips sent within the window, not those of the ramp', () => {
    // A second of slow start at 2 Mbit/s, then 20: the window starts after the ramp.
    const progress: ByteCount[] = Array.from({ length: 800 }, (_, i) => {
      const at = (i + 1) * 10;
      return { atMs: at, bytes: at <= 1_000 ? (at * 2e6) / 8 / 1000 : (1_000 * 2e6) / 8 / 1000 + ((at - 1_000) * 20e6) / 8 / 1000 };
    });
    // The ramp's round trips are short; the window's show the queue.
    const trips: RoundTrip[] = [...Array.from({ length: 10 }, (_, i) => ({ atMs: i * 100, ms: 2 })), ...Array.from({ length: 50 }, (_, i) => ({ atMs: 3_000 + i * 100, ms: 250 + (i % 5) }))];
    const m = measureDirection(progress, trips, 8_000, PROFILES.full);
    expect(m.sustained?.startMs).toBeGreaterThanOrEqual(1_000);
    expect(m.sustained?.startMs).toBeLessThanOrEqual(3_000);
    expect(m.loaded).toEqual({ ms: 252, count: 50, resent: 0 });
    expect(m.rates.length).toBe(8_000 / INTERVAL_MS);
  });
});

describe('the load both clients make', () => {
  it('sizes each upload to take about a second at the rate of the stream\'s last one, within 64 kB, 64 MB and the server\'s limit', () => {
    // 256 kB in 100 ms: 2.56 MB for a second.
    expect(nextUploadBytes(256_000, 100, 250_000_000)).toBe(2_560_000);
    expect(nextUploadBytes(256_000, 120_000, 250_000_000)).toBe(64_000);
    expect(nextUploadBytes(64_000_000, 1, 250_000_000)).toBe(MAX_UPLOAD_BYTES);
    expect(nextUploadBytes(10_000_000, 1, 20_000_000)).toBe(20_000_000);
  });

  it('spaces the round trips under load so a direction makes at most 50: 200 ms apart in the default test, 100 in the light one', () => {
    expect(probeGapMs(PROFILES.full)).toBe(200);
    expect(probeGapMs(PROFILES.light)).toBe(100);
  });
});

describe('uploads placed in the time they arrived', () => {
  it('counts each upload evenly over its arrival, up to the time every stream has answered for', () => {
    const progress = receivedProgress([
      { stream: 0, startMs: 0, endMs: 1_000, bytes: 2_500_000 },
      { stream: 1, startMs: 0, endMs: 1_500, bytes: 3_750_000 },
      { stream: 0, startMs: 1_000, endMs: 2_000, bytes: 2_500_000 },
      { stream: 1, startMs: 1_500, endMs: 3_000, bytes: 3_750_000 },
    ]);
    // Stream 0 has answered for 2 s, stream 1 for 1.5 s... and for 3 s: the counts reach 2 s.
    expect(progress.at(-1)).toEqual({ atMs: 2_000, bytes: 5_000_000 + 3_750_000 + 1_250_000 });
    expect(bytesAt(progress, 1_000)).toBeCloseTo(2_500_000 + 2_500_000, 0);
    expect(bytesAt(progress, 500)).toBeCloseTo(1_250_000 + 1_250_000, 0);
  });

  it('does not wait for a stalled stream: one that last answered three seconds or more before the newest answer', () => {
    // Three streams answer every second to 10 s; the fourth answered at 1 s and then sat out
    // retransmission timeouts. The counts reach 10 s, the fourth's first upload in them.
    const uploads: Received[] = [{ stream: 3, startMs: 0, endMs: 1_000, bytes: 100_000 }];
    for (let stream = 0; stream < 3; stream++) for (let end = 1_000; end <= 10_000; end += 1_000) uploads.push({ stream, startMs: end - 1_000, endMs: end, bytes: 800_000 });
    const progress = receivedProgress(uploads);
    expect(progress.at(-1)).toEqual({ atMs: 10_000, bytes: 100_000 + 3 * 10 * 800_000 });
    // Two and a half seconds behind is no stall: the counts wait for it.
    const behind = receivedProgress([...uploads.filter((u) => u.endMs <= 4_000), { stream: 3, startMs: 1_000, endMs: 1_500, bytes: 50_000 }]);
    expect(behind.at(-1)?.atMs).toBe(1_500);
  });

  it('counts cut at a direction\'s end read there between their neighbours, and as before it', () => {
    const progress: ByteCount[] = [{ atMs: 1_000, bytes: 100 }, { atMs: 2_000, bytes: 300 }, { atMs: 3_000, bytes: 400 }];
    expect(countsUntil(progress, 2_500)).toEqual([{ atMs: 1_000, bytes: 100 }, { atMs: 2_000, bytes: 300 }, { atMs: 2_500, bytes: 350 }]);
    // Counts that end before it are left as they are.
    expect(countsUntil(progress, 4_000)).toEqual(progress);
  });

  it('nothing is counted before every stream has answered once', () => {
    expect(receivedProgress([{ stream: 0, startMs: 0, endMs: 1_000, bytes: 1 }, { stream: 1, startMs: 0, endMs: 0, bytes: 0 }])).toEqual([]);
  });

  it('a shaper\'s burst reaching the uploads shows where it was, not a second later: the burst named, the rate after it', () => {
    // Four streams sharing a link of 20 Mbit/s after 4 MB at 40 (1.6 s), each sending one-second
    // uploads back to back, their ends staggered by 250 ms (the first upload of stream k lasts 250(k + 1) ms).
    const rateAt = (t: number) => (t < 1_600 ? 40e6 : 20e6);
    const uploads = [];
    for (let stream = 0; stream < 4; stream++) {
      for (let start = 0, end = 250 * (stream + 1); start < 10_000; start = end, end += 1_000) {
        let bytes = 0;
        for (let t = start; t < end; t += 10) bytes += (rateAt(t) / 4 / 8) * 0.01;
        uploads.push({ stream, startMs: start, endMs: end, bytes });
      }
    }
    const m = measureDirection(receivedProgress(uploads), [], 10_000, PROFILES.full);
    within(m.sustained?.bps, 20e6, 0.02);
    expect(m.burst).toBeDefined();
    within(m.burst?.bytes, 4e6, 0.15);
  });
});

describe('the live rate', () => {
  it('on a boosted link, once the rate settles, reads the stretch that will be measured: within 3% of the final figure through the last second', () => {
    // 20 Mbit/s after a 4 MB bucket at 40, then steady with a little noise, counted every 10 ms
    // until the direction would end (steady for the default window).
    const noise = seeded(48);
    const rates = Array.from({ length: 200 }, (_, i) => (i < 16 ? 40 : 19 + noise()));
    const full = progressOf(rates);
    let end = 0;
    for (let t = 1_000; t <= 20_000; t += 50) {
      if (directionDone(full.filter((p) => p.atMs <= t), [], t, PROFILES.full)) {
        end = t;
        break;
      }
    }
    expect(end).toBeGreaterThan(0);
    const final = measureDirection(full.filter((p) => p.atMs <= end), [], end, PROFILES.full).sustained?.bps ?? 0;
    for (let t = end - 1_000; t <= end; t += 100) within(liveBps(full.filter((p) => p.atMs <= t), PROFILES.full), final, 0.03);
    // The last window's length of the counts, a second before the end, still held the burst's tail.
    const lastWindow = measureDirection(full.filter((p) => p.atMs <= end - 1_000), [], end - 1_000, PROFILES.full).sustained?.bps ?? 0;
    expect(lastWindow / final).toBeGreaterThan(1.05);
  });

  it('on loopback, where the rate never settles, reads the last window\'s length, as the figure does', () => {
    const recorded = JSON.parse(readFileSync(new URL('../../../test/fixtures/speedtest/loopback-cli.json', import.meta.url), 'utf8')) as Record<'download' | 'upload', { progress: [number, number][]; end_ms: number }>;
    for (const d of ['download', 'upload'] as const) {
      const progress = recorded[d].progress.map(([atMs, bytes]) => ({ atMs, bytes }));
      const end = recorded[d].end_ms;
      const final = measureDirection(progress, [], end, PROFILES.full).sustained?.bps ?? 0;
      const readings = [];
      for (let t = end - 1_000; t <= end; t += 100) readings.push(liveBps(progress.filter((p) => p.atMs <= t), PROFILES.full) ?? 0);
      within([...readings].sort((a, b) => a - b)[Math.floor(readings.length / 2)], final, 0.1);
      within(readings.at(-1), final, 0.001);
    }
  });
});

describe('an upload\'s quarters from the server', () => {
  it('places an upload from its answer back by the body\'s time, never before it was sent, its quarters in order within', () => {
    expect(receivedUpload(2, 100, 1_000, 2_000, { ms: 800, quarters: [100, 300, 700] })).toEqual({ stream: 2, bytes: 100, startMs: 1_200, endMs: 2_000, quarters: [1_300, 1_500, 1_900] });
    // A body time longer than the upload took by the client's clock starts it when it was sent; quarters past the end stop there.
    expect(receivedUpload(0, 100, 1_000, 2_000, { ms: 1_500, quarters: [100, 900, 1_200] })).toEqual({ stream: 0, bytes: 100, startMs: 1_000, endMs: 2_000, quarters: [1_100, 1_900, 2_000] });
    expect(receivedUpload(0, 100, 1_000, 2_000, undefined)).toEqual({ stream: 0, bytes: 100, startMs: 1_000, endMs: 2_000 });
  });

  it('four streams trading shares of a steady link read steady with the quarters, and not without them', () => {
    // 20 Mbit/s shared by four streams whose shares swing by ±60% over two seconds, a quarter of
    // the swing apart (so they always add up to the link); each stream sends one-second uploads
    // back to back, their ends staggered by 250 ms.
    const share = (stream: number, t: number) => 0.25 * (1 + 0.6 * Math.sin((2 * Math.PI * (t / 2_000 + stream / 4))));
    const withQuarters: Received[] = [];
    for (let stream = 0; stream < 4; stream++) {
      for (let start = 0, end = 250 * (stream + 1); start < 10_000; start = end, end += 1_000) {
        const marks: number[] = [];
        let bytes = 0;
        const arrived: [number, number][] = [];
        for (let t = start; t < end; t += 1) {
          bytes += (20e6 * share(stream, t)) / 8 / 1000;
          arrived.push([t + 1, bytes]);
        }
        for (const q of [0.25, 0.5, 0.75]) marks.push((arrived.find(([, b]) => b >= q * bytes) ?? [end])[0] - start);
        withQuarters.push(receivedUpload(stream, bytes, start, end, { ms: end - start, quarters: marks }));
      }
    }
    const without = withQuarters.map((r): Received => ({ stream: r.stream, bytes: r.bytes, startMs: r.startMs, endMs: r.endMs }));
    const placed = measureDirection(receivedProgress(withQuarters), [], 10_000, PROFILES.full);
    expect(placed.sustained?.steady).toBe(true);
    within(placed.sustained?.bps, 20e6, 0.01);
    const spread = (rates: number[]) => Math.max(...rates.slice(8)) / Math.min(...rates.slice(8));
    expect(spread(placed.rates)).toBeLessThan(1.05);
    const even = measureDirection(receivedProgress(without), [], 10_000, PROFILES.full);
    expect(spread(even.rates)).toBeGreaterThan(1.15);
  });
});

describe('round trips that waited for a retransmission', () => {
  it('are counted apart, not mixed into the loaded latency: the page\'s upload round trips on a 20 Mbit/s link with a 5 ms queue', () => {
    // Recorded (ms, in order) from the page's default test through tbf 20 Mbit/s with a 5 ms
    // queue; ping beside a bulk upload there read a median of 5.1 ms with none lost.
    const recorded = [1.2, 6.8, 7.1, 6.2, 217.4, 5.5, 8.1, 5.3, 5.0, 6.5, 217.3, 225.7, 865.8, 4.4, 215.8, 5.7, 6.6, 216.9, 5.6, 426.7, 5.8, 213.8, 5.7, 5.2, 6.5, 5.9, 6.2, 218.5, 223.2, 431.1];
    const trips = recorded.map((ms, i) => ({ atMs: 1_000 + i * 160, ms }));
    const m = measureDirection(steadyAt(20, 6_000), trips, 6_000, PROFILES.full);
    expect(m.loaded?.resent).toBe(11);
    expect(m.loaded?.count).toBe(19);
    expect(m.loaded?.ms).toBeLessThan(7);
  });

  it('on a full 300 ms queue, the queue\'s own spread is kept whole', () => {
    const trips = Array.from({ length: 25 }, (_, i) => ({ atMs: 1_000 + i * 200, ms: 200 + ((i * 37) % 100) }));
    const m = measureDirection(steadyAt(20, 6_000), trips, 6_000, PROFILES.full);
    expect(m.loaded?.resent).toBe(0);
    expect(m.loaded?.count).toBe(25);
  });
});

/** A link moving `mbps` steadily for `ms`, counted every 10 ms. */
function steadyAt(mbps: number, ms: number): ByteCount[] {
  return Array.from({ length: ms / 10 }, (_, i) => ({ atMs: (i + 1) * 10, bytes: ((i + 1) * 10 * mbps * 1e6) / 8 / 1000 }));
}
