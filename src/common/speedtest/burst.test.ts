// The burst rules over series recorded on links of known shape (tbf on a router namespace, the
// server sending with CUBIC; test/support/shaped-link.ts): a CLI-like ladder of back-to-back
// transfers (100 kB to 25 MB) each way, and on the same link a bulk download timed every 100 ms,
// which is the reference (test/support/burst-reference.ts). The expected figures come from the
// bulk transfer, never from these rules: sustained within 10%, the burst's peak within 15% and its
// size within 30%, as issue 38 asks of the command line.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { burstReference } from '../../../test/support/burst-reference.js';
import { directionRates, MIN_BURST_BYTES, type TimedTransfer } from './burst.js';

interface Recorded {
  /** The bulk download's rate in each 100 ms, Mbit/s. */
  bulk_100ms_mbps: number[];
  /** [start ms, end ms, bytes] of each transfer, in the order they ran. */
  download: [number, number, number][];
  upload: [number, number, number][];
}

const recorded = (name: string): Recorded => JSON.parse(readFileSync(new URL(`../../../test/fixtures/speedtest/${name}.json`, import.meta.url), 'utf8')) as Recorded;

const transfers = (rows: [number, number, number][]): TimedTransfer[] =>
  rows.map(([start, end, bytes]) => ({ ping: 0, duration: end - start, bps: (8 * bytes) / ((end - start) / 1000), bytes, endMs: end }));

const within = (value: number, reference: number, share: number) => {
  expect(Math.abs(value - reference) / reference, `${String(value)} against ${String(reference)}`).toBeLessThanOrEqual(share);
};

describe('the sustained rate and the burst, on recorded links', () => {
  it('a plain 20 Mbit/s link (tbf bucket 2.5 kB): no burst either way, the rate is the link', () => {
    const link = recorded('plain-20');
    const reference = burstReference(link.bulk_100ms_mbps);
    expect(reference.burstBytes).toBe(0);
    for (const direction of ['download', 'upload'] as const) {
      const rates = directionRates(transfers(link[direction]));
      expect(rates.burst).toBeUndefined();
      within((rates.sustained?.bps ?? 0) / 1e6, reference.sustainedMbps, 0.1);
    }
  });

  for (const [name, shape] of [
    ['boost-20-40', '20 Mbit/s after a 4 MB bucket at 40'],
    ['boost-100-200', '100 Mbit/s after a 20 MB bucket at 200'],
  ] as const) {
    it(`a boosted link, ${shape}: the sustained rate as the figure, the burst named`, () => {
      const link = recorded(name);
      const reference = burstReference(link.bulk_100ms_mbps);
      expect(reference.burstBytes).toBeGreaterThan(MIN_BURST_BYTES);
      for (const direction of ['download', 'upload'] as const) {
        const rates = directionRates(transfers(link[direction]));
        within((rates.sustained?.bps ?? 0) / 1e6, reference.sustainedMbps, 0.1);
        expect(rates.burst, direction).toBeDefined();
        within((rates.burst?.peakBps ?? 0) / 1e6, reference.peakMbps, 0.15);
        within(rates.burst?.bytes ?? 0, reference.burstBytes, 0.3);
      }
    });
  }
});

describe('a client that pauses between transfers', () => {
  it("reads the link's rate, not the bucket its pauses refill: the page's uploads on a 96/160 Mbit/s link", () => {
    // The link: 96 Mbit/s (12 MB/s) sustained, 160 (20 MB/s) while a 20 MB bucket lasts, which
    // refills at 12 MB/s while the link idles. Ten 5 MB transfers 20 ms apart spend the bucket,
    // then three of 25 MB each start 210 ms after the one before (the engine reading the answer
    // and Chromium copying the next body): each sends the 2.52 MB its pause refilled at the peak,
    // 6.3 MB in all at 20 MB/s, and the rest at 12 MB/s, so it reads 107 Mbit/s.
    const R = 12e6;
    const P = 20e6;
    let tokens = 20e6;
    let t = 0;
    const out: TimedTransfer[] = [];
    const send = (bytes: number, gapMs: number) => {
      tokens = Math.min(20e6, tokens + (R * gapMs) / 1000);
      t += gapMs;
      const atPeak = Math.min(bytes, (tokens * P) / (P - R));
      tokens -= ((P - R) * atPeak) / P;
      const ms = 1000 * (atPeak / P + (bytes - atPeak) / R);
      t += ms;
      out.push({ ping: 0, duration: ms, bps: (8 * bytes) / (ms / 1000), bytes, endMs: t });
    };
    for (let i = 0; i < 10; i++) send(5e6, 20);
    for (let i = 0; i < 3; i++) send(25e6, 210);
    expect((out.at(-1)?.bps ?? 0) / 1e6).toBeGreaterThan(105);
    const rates = directionRates(out);
    expect(rates.burst).toBeDefined();
    within((rates.sustained?.bps ?? 0) / 1e6, 96, 0.02);
  });
});

describe('what is not a burst', () => {
  /** Back-to-back transfers of `bytes` at `mbps` each, one after another from time 0. */
  const series = (parts: { bytes: number; mbps: number }[]): TimedTransfer[] => {
    let t = 0;
    return parts.map(({ bytes, mbps }) => {
      const duration = (8 * bytes) / (mbps * 1e3);
      t += duration;
      return { ping: 0, duration, bps: mbps * 1e6, bytes, endMs: t };
    });
  };

  it('a noisy plain link: rates scattered 15% either way in no order', () => {
    const wobble = [1.15, 0.85, 1.1, 0.9, 1.0, 1.12, 0.88, 0.95, 1.05, 0.86, 1.14, 1.0];
    const rates = directionRates(series(wobble.map((w) => ({ bytes: 1_000_000, mbps: 20 * w }))));
    expect(rates.burst).toBeUndefined();
  });

  it("TCP's slow start: the first transfers slower, the later ones at the link", () => {
    const rates = directionRates(series([...Array.from({ length: 6 }, () => ({ bytes: 100_000, mbps: 8 })), ...Array.from({ length: 8 }, () => ({ bytes: 1_000_000, mbps: 20 }))]));
    expect(rates.burst).toBeUndefined();
    expect(rates.sustained?.bps).toBe(20e6);
  });

  it('a drop too small to carry a megabyte above the rate (a shaper bucket of a few hundred kB)', () => {
    const rates = directionRates(series([{ bytes: 400_000, mbps: 40 }, { bytes: 400_000, mbps: 40 }, ...Array.from({ length: 6 }, () => ({ bytes: 1_000_000, mbps: 20 }))]));
    expect(rates.burst).toBeUndefined();
  });

  it('a drop at the very end, too short to call the rate after it sustained', () => {
    const rates = directionRates(series([...Array.from({ length: 10 }, () => ({ bytes: 1_000_000, mbps: 40 })), { bytes: 1_000_000, mbps: 20 }, { bytes: 1_000_000, mbps: 20 }]));
    expect(rates.burst).toBeUndefined();
  });

  it('too few transfers to tell', () => {
    expect(directionRates(series([{ bytes: 5_000_000, mbps: 40 }, { bytes: 5_000_000, mbps: 20 }])).burst).toBeUndefined();
  });
});
