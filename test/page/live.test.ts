// The page's live rate (web/speedtest/live-rate.ts): the rate of the window the running direction would be
// measured over if it ended now, so that at its end the line is the figure.
import { describe, expect, it } from 'vitest';
import { measureDirection, PROFILES, type ByteCount } from '../../src/common/speedtest/working.js';
import { liveBps } from '../../web/speedtest/live-rate.js';

/** A link of `mbps` counted every 15 ms for `ms`, moved by ±5% in alternate 250 ms (a sawtooth), after `rampMs` at a tenth of it. */
function link(mbps: number, ms: number, rampMs = 0): ByteCount[] {
  const progress: ByteCount[] = [];
  let bytes = 0;
  for (let at = 15; at <= ms; at += 15) {
    const factor = at <= rampMs ? 0.1 : Math.floor(at / 250) % 2 === 0 ? 1.05 : 0.95;
    bytes += (mbps * 1e6 * factor * 0.015) / 8;
    progress.push({ atMs: at, bytes });
  }
  return progress;
}

describe('the live rate', () => {
  it('is nothing before the first count, and the bytes over the time since the start before a whole interval', () => {
    expect(liveBps([], PROFILES.full)).toBeUndefined();
    expect(liveBps([{ atMs: 100, bytes: 125_000 }], PROFILES.full)).toBeCloseTo(10e6, 0);
  });

  it('ends at the last count, not the clock: an upload counted as each transfer ends reads no slower between them', () => {
    // Uploads of 1.25 MB ending every 500 ms: 20 Mbit/s, whenever it is read.
    const uploads = Array.from({ length: 8 }, (_, i) => ({ atMs: 500 * (i + 1), bytes: 1_250_000 * (i + 1) }));
    expect((liveBps(uploads, PROFILES.full) ?? 0) / 20e6).toBeCloseTo(1, 2);
  });

  it('at the direction\'s end is the figure it reports, steady or not', () => {
    for (const progress of [link(50, 6_000), link(50, 10_000, 4_000)]) {
      const end = progress.at(-1)?.atMs ?? 0;
      expect(liveBps(progress, PROFILES.full)).toBe(measureDirection(progress, [], end, PROFILES.full).sustained?.bps);
    }
  });

  it('while the rate settles after a slow start, shows the last window\'s rate, which leaves the ramp behind as it goes', () => {
    // A second at a tenth of 50 Mbit/s, then 50: at 3 s the window holds the ramp, at 7 s it does not.
    const progress = link(50, 7_000, 1_000);
    const at = (ms: number) => progress.filter((p) => p.atMs <= ms);
    const early = liveBps(at(3_000), PROFILES.full) ?? 0;
    const later = liveBps(at(7_000), PROFILES.full) ?? 0;
    expect(early).toBeLessThan(45e6);
    expect(Math.abs(later - 50e6) / 50e6).toBeLessThan(0.05);
  });
});
