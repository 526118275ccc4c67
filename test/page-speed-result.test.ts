// A finished speed test's figures as the page shows them (web/speed-result.ts), from series of
// engine readings made here: the headline rates are the command line's rules over the same
// transfers (the sustained rate, the burst named), the latencies and their spread, the loss and
// whether it can be trusted, the verdict line, and the record shared and kept.
import { describe, expect, it } from 'vitest';
import type { EnginePoint } from '../web/report.js';
import { speedResult, type Readings } from '../web/speed-result.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

/** Transfers back to back on a link: each `bytes` long at `mbps`, the first starting at T0. */
function series(steps: [bytes: number, count: number][], mbpsAt: (sentBytes: number) => number): EnginePoint[] {
  const points: EnginePoint[] = [];
  let at = T0;
  let sent = 0;
  for (const [bytes, count] of steps) {
    for (let i = 0; i < count; i++) {
      const mbps = mbpsAt(sent);
      const duration = (bytes * 8) / (mbps * 1e3);
      at += duration + 1;
      sent += bytes;
      points.push({ bytes, bps: (bytes * 8 * 1000) / duration, duration, ping: 20, measTime: new Date(at), transferSize: bytes });
    }
  }
  return points;
}

const LADDER: [number, number][] = [
  [100_000, 4],
  [250_000, 2],
  [500_000, 2],
  [1_000_000, 2],
  [2_500_000, 2],
  [5_000_000, 3],
  [10_000_000, 3],
];

function readings(over: Partial<Readings> = {}): Readings {
  return {
    mode: 'full',
    startedAt: T0,
    download: series(LADDER, () => 20),
    upload: series(LADDER, () => 10),
    idle: [20, 21, 19, 20, 22],
    loadedDown: [40, 42, 41],
    loadedUp: [35, 36, 34],
    loss: { run: false, why: 'this server has no TURN server to measure it through' },
    ...over,
  };
}

describe('a finished speed test as the page shows it', () => {
  it('reads each rate as the link gave it, at a share link\'s precision, with how it was reached', () => {
    const r = speedResult(readings());
    // The 90th percentile of the transfers' own rates (the engine's rule, which the command line shares).
    expect(r.figures.download).toMatchObject({ value: '20 Mbps', exact: 20_000_000, detail: '90th percentile of 18 transfers of 10 ms or more' });
    expect(r.figures.upload.exact).toBe(10_000_000);
    expect(r.figures.download.burst).toBeUndefined();
    expect(r.shared).toMatchObject({ at: T0, mode: 'full', downloadBps: 20_000_000, uploadBps: 10_000_000, latencyMs: 20 });
  });

  it('on a link with a burst, the headline is the sustained rate and the burst is named under it', () => {
    // 40 Mbit/s for the first 4 MB, then 20: the command line's rules (src/common/speedtest/burst.ts).
    const r = speedResult(readings({ download: series(LADDER, (sent) => (sent < 4_000_000 ? 40 : 20)) }));
    expect(r.figures.download.exact).toBeGreaterThan(19_000_000);
    expect(r.figures.download.exact).toBeLessThan(21_000_000);
    expect(r.figures.download.burst?.peakBps).toBeGreaterThan(38_000_000);
    expect(r.figures.download.detail).toMatch(/^burst: (39|40) Mbps for the first [0-9.]+ MB; sustained: /);
  });

  it('grades the latency added under load, says what the connection is good for, and fills the classes', () => {
    const r = speedResult(readings());
    // Worse loaded latency 41 ms (the down median) less 20 idle: +21 ms, A.
    expect(r.figures.loaded).toMatchObject({ value: '41 ms down, 35 ms up', exact: 41 });
    expect(r.figures.bufferbloat).toMatchObject({ value: 'A (+21 ms)', exact: 21 });
    expect(r.bufferbloat).toEqual({ grade: 'A', increase_ms: 21 });
    expect(r.figures.latency).toMatchObject({ value: '20 ms', exact: 20, detail: 'min 19 ms, p90 22 ms, jitter 1.5 ms; 5 round trips' });
    // The engine's scoring: streaming 5 (latency 20 ms) + 10 (20 Mbit/s) + 5 (+21 ms) = 20, average;
    // video calls 5 + 10 (jitter 1.5 ms) + 5 = 20, average; gaming 5 + 5 = 10, poor.
    expect(r.classes).toEqual({ streaming: 'average', gaming: 'poor', video_call: 'average' });
    // Something is not good, but the line does not lag under load (A): no cause named.
    expect(r.verdict).toBe('Fair for streaming video and video calls; poor for online games.');
  });

  it('without latency under load: not measured, why, the classes pending, and no verdict claimed', () => {
    const r = speedResult(readings({ mode: 'light', loadedDown: [], loadedUp: [] }));
    expect(r.figures.loaded.value).toBe('not measured');
    expect(r.figures.loaded.detail).toMatch(/^no transfer lasted 250 ms/);
    expect(r.figures.bufferbloat.value).toBe('not measured');
    expect(r.figures.classes).toEqual({ value: 'pending', detail: 'each waits for the latency under load, which this test could not take (the full test may)' });
    expect(r.verdict).toBeUndefined();
  });

  it('packet loss: the count when the browser sent at the pace, else why not, else why it was not measured', () => {
    const sending = { messages: 1000, maxWaiting: 9, datagrams: 1049 };
    const counted = speedResult(readings({ loss: { run: true, sent: 1000, lost: 50, sending } }));
    expect(counted.figures.loss).toEqual({ value: '5.0%', detail: "50 of 1000 datagrams through this server's TURN server", exact: 5 });
    expect(counted.loss).toEqual({ sent: 1000, lost: 50, percent: 5 });
    expect(counted.shared.lossPercent).toBe(5);
    expect(counted.lossCounted).toBe(true);
    const packed = speedResult(readings({ loss: { run: true, sent: 1000, lost: 176, sending: { messages: 1000, maxWaiting: 506, datagrams: 518 } } }));
    expect(packed.figures.loss.value).toBe('not trustworthy');
    expect(packed.loss).toBeUndefined();
    expect(packed.shared.lossPercent).toBeUndefined();
    expect(speedResult(readings({ loss: { run: true, error: 'the TURN server did not answer within 5 s' } })).figures.loss).toEqual({ value: 'not measured', detail: 'the TURN server did not answer within 5 s' });
    const skipped = speedResult(readings());
    expect(skipped.figures.loss).toEqual({ value: 'not measured', detail: 'this server has no TURN server to measure it through' });
    expect(skipped.lossCounted).toBe(false);
  });

  it('with no transfer timed: no rate, said so', () => {
    const r = speedResult(readings({ download: [], upload: [] }));
    expect(r.figures.download).toMatchObject({ value: '–', detail: 'no transfer was timed' });
    expect(r.figures.download.exact).toBeUndefined();
    expect(r.shared.downloadBps).toBeUndefined();
  });
});
