// A finished speed test's figures as the page shows them (web/speedtest/speed-result.ts), from loads made
// here: the headline rates are the command line's rules over the same counts
// (src/common/speedtest/working.ts: the sustained rate, the burst named), the latencies and their
// spread, the loss and whether it can be trusted, the verdict line, and the record shared and kept.
import { describe, expect, it } from 'vitest';
import { measureDirection, PROFILES, type RoundTrip } from '../../src/common/speedtest/working.js';
import { speedResult, type Measured, type Readings } from '../../web/speedtest/speed-result.js';

const T0 = Date.UTC(2026, 10, 26, 9, 0, 0);

/**
 * A direction's load for `ms`: the bytes counted every 15 ms at `mbpsAt(ms since the start)`,
 * and round trips of `loaded` ms, one a second from the second second, measured by the rules.
 */
function load(mbpsAt: (atMs: number) => number, loaded: number[] = [], ms = 8000, before: RoundTrip[] = []): Measured {
  const progress = [];
  let bytes = 0;
  for (let at = 15; at <= ms; at += 15) {
    bytes += (mbpsAt(at) * 1e6 * 0.015) / 8;
    progress.push({ atMs: at, bytes });
  }
  const roundTrips: RoundTrip[] = [...before, ...loaded.map((rtt, i) => ({ atMs: ms - 1000 * (loaded.length - i), ms: rtt }))];
  return { measure: measureDirection(progress, roundTrips, ms, PROFILES.full), roundTrips, streams: 4 };
}

function readings(over: Partial<Readings> = {}): Readings {
  return {
    mode: 'full',
    startedAt: T0,
    download: load(() => 20, [40, 42, 41]),
    upload: load(() => 10, [35, 36, 34]),
    idle: [20, 21, 19, 20, 22],
    loss: { run: false, why: 'this server has no TURN server to measure it through' },
    ...over,
  };
}

describe('a finished speed test as the page shows it', () => {
  it('reads each rate as the link gave it, at a share link\'s precision, with how it was reached', () => {
    const r = speedResult(readings());
    // Bytes over time across the streams, over the last 5 s of the steady stretch (the default test's window).
    expect(r.figures.download).toMatchObject({ value: '20\u00a0Mbps', exact: 20_000_000, detail: '4 streams, steady for 5.0\u00a0s' });
    expect(r.figures.upload.exact).toBe(10_000_000);
    expect(r.figures.download.burst).toBeUndefined();
    expect(r.shared).toMatchObject({ at: T0, mode: 'full', downloadBps: 20_000_000, uploadBps: 10_000_000, latencyMs: 20 });
  });

  it('says that several streams shared one connection when they went over HTTP/2 or HTTP/3, and not for one stream', () => {
    const over = (multiplexed: Measured['multiplexed'], streams: number) => speedResult(readings({ download: { ...load(() => 20, [40, 42, 41]), streams, ...(multiplexed === undefined ? {} : { multiplexed }) } })).figures.download.detail;
    expect(over('h2', 4)).toBe('4 streams, steady for 5.0\u00a0s; the streams shared one HTTP/2 connection');
    expect(over('h3', 4)).toBe('4 streams, steady for 5.0\u00a0s; the streams shared one HTTP/3 connection');
    expect(over(undefined, 4)).toBe('4 streams, steady for 5.0\u00a0s');
    expect(over('h2', 1)).toBe('1 stream, steady for 5.0\u00a0s');
  });

  it('on a link with a burst, the headline is the sustained rate and the burst is named under it', () => {
    // 40 Mbit/s for the first 2 s, then 20: the command line's rules (src/common/speedtest/working.ts).
    const r = speedResult(readings({ download: load((at) => (at <= 2000 ? 40 : 20), [40, 42, 41]) }));
    expect(r.figures.download.exact).toBeGreaterThan(19_000_000);
    expect(r.figures.download.exact).toBeLessThan(21_000_000);
    expect(r.figures.download.burst?.peakBps).toBeGreaterThan(38_000_000);
    expect(r.figures.download.detail).toMatch(/^burst: (39|40)\u00a0Mbps for the first [0-9.]+\u00a0MB; sustained: 4 streams, steady for [0-9.]+\u00a0s$/);
  });

  it('when the rate never settles, says so: the average of the last window', () => {
    // 10 and 30 Mbit/s a second each, in turn: no second is within a tenth of the next.
    const unsettled = load((at) => (Math.floor(at / 1000) % 2 === 0 ? 10 : 30));
    const window = unsettled.measure.sustained;
    expect(window?.steady).toBe(false);
    const r = speedResult(readings({ download: unsettled }));
    // The window's length as the rules chose it (src/common/speedtest/working.ts), to the tenth of a second.
    expect(r.figures.download.detail).toBe(`4 streams; the rate did not settle: average of the last ${(((window?.endMs ?? 0) - (window?.startMs ?? 0)) / 1000).toFixed(1)}\u00a0s`);
    expect(r.figures.download.exact).toBeGreaterThan(15_000_000);
    expect(r.figures.download.exact).toBeLessThan(25_000_000);
  });

  it('grades the latency added under load, says what the connection is good for, and fills the classes', () => {
    const r = speedResult(readings());
    // Worse loaded latency 41 ms (the down median) less 20 idle: +21 ms, A.
    expect(r.figures.loaded).toMatchObject({ value: '41\u00a0ms down, 35\u00a0ms up', exact: 41 });
    expect(r.figures.bufferbloat).toMatchObject({ value: 'A (+21\u00a0ms)', exact: 21 });
    expect(r.bufferbloat).toEqual({ grade: 'A', increase_ms: 21 });
    expect(r.figures.latency).toMatchObject({ value: '20\u00a0ms', exact: 20, detail: 'min 19\u00a0ms, p90 22\u00a0ms, jitter 1.5\u00a0ms; 5 round trips' });
    // The engine's scoring: streaming 5 (latency 20 ms) + 10 (20 Mbit/s) + 5 (+21 ms) = 20, average;
    // video calls 5 + 10 (jitter 1.5 ms) + 5 = 20, average; gaming 5 + 5 = 10, poor.
    expect(r.classes).toEqual({ streaming: 'average', gaming: 'poor', video_call: 'average' });
    // Something is not good, but the line does not lag under load (A): no cause named.
    expect(r.verdict).toBe('Fair for streaming video and video calls; poor for online games. Responsiveness under load: about 1,579\u00a0RPM (good).');
  });

  it('estimates responsiveness from every round trip of both windows: 60 000 over their trimmed mean, named an estimate, kept in the record', () => {
    const r = speedResult(readings());
    // The six round trips (40, 42, 41, 35, 36, 34 ms) average 38 ms: 60 000 / 38 = 1579 RPM, "good" (1000 to 6000).
    expect(r.rpm).toBe(1_579);
    expect(r.figures.rpm).toMatchObject({ value: '1,579\u00a0RPM (good)', exact: 1_579 });
    expect(r.figures.rpm.detail).toContain('an estimate: 60,000 over the trimmed mean of the 6 round trips timed under load');
    // How it relates to netdiag rpm's figure: what each counts, and how far apart they read by the queue.
    expect(r.figures.rpm.detail).toContain('netdiag rpm, the IETF responsiveness test, times new connections and requests on the loaded connections themselves');
    expect(r.figures.rpm.detail).toContain('where the queue is short it reads several times lower than this, where the queue is long the two are of the same order');
    expect(r.shared.rpm).toBe(1_579);
    // A 300 ms queue (round trips averaging 300 ms) reads 200 RPM, poor (under 300).
    const bloated = speedResult(readings({ download: load(() => 20, [300, 310, 305]), upload: load(() => 10, [290, 300, 295]) }));
    expect(bloated.figures.rpm.value).toBe('200\u00a0RPM (poor)');
    // Without round trips under load: not measured, and nothing in the record.
    const none = speedResult(readings({ mode: 'light', download: load(() => 20), upload: load(() => 10) }));
    expect(none.figures.rpm).toMatchObject({ value: 'not measured', detail: 'no round trip was timed while the link was loaded' });
    expect(none.rpm).toBeNull();
    expect(none.shared.rpm).toBeUndefined();
  });

  it('the loaded latency is the median of the round trips within each window, their p90 and count under it', () => {
    const r = speedResult(readings());
    expect(r.figures.loaded.detail).toBe('down: 9 in 10 of 3 round trips within 42\u00a0ms; up: 9 in 10 of 3 round trips within 36\u00a0ms');
    expect(r.shared).toMatchObject({ loadedDownMs: 41, loadedUpMs: 35 });
    // Round trips sent before the window (in a burst that ends at 2 s) are not the window's.
    const withEarly = speedResult(readings({ download: load((at) => (at <= 2000 ? 40 : 20), [40, 42, 41], 8000, [{ atMs: 100, ms: 500 }, { atMs: 600, ms: 400 }]) }));
    expect(withEarly.figures.loaded).toMatchObject({ value: '41\u00a0ms down, 35\u00a0ms up', detail: 'down: 9 in 10 of 3 round trips within 42\u00a0ms; up: 9 in 10 of 3 round trips within 36\u00a0ms' });
  });

  it('without latency under load: not measured, why, the classes pending, and no verdict claimed', () => {
    const r = speedResult(readings({ mode: 'light', download: load(() => 20), upload: load(() => 10) }));
    expect(r.figures.loaded.value).toBe('not measured');
    expect(r.figures.loaded.detail).toBe('no round trip was timed while the link was loaded');
    expect(r.figures.bufferbloat.value).toBe('not measured');
    expect(r.figures.classes).toEqual({ value: 'pending', detail: 'each waits for the latency under load, which this test could not take (the full test may)' });
    expect(r.verdict).toBeUndefined();
  });

  it('packet loss: the count in datagrams, or in messages when the browser sent at the pace, else why not, else why it was not measured', () => {
    const sending = { messages: 1000, maxWaiting: 9, datagrams: undefined, received: undefined };
    const counted = speedResult(readings({ loss: { run: true, sent: 1000, lost: 50, sending } }));
    expect(counted.figures.loss).toEqual({ value: '5.0%', detail: "50 of 1000 datagrams through this server's TURN server", exact: 5 });
    expect(counted.loss).toEqual({ sent: 1000, lost: 50, percent: 5 });
    expect(counted.shared.lossPercent).toBe(5);
    expect(counted.lossCounted).toBe(true);
    // Packed, counted in datagrams at both ends: the datagrams' loss stands.
    const datagrams = speedResult(readings({ loss: { run: true, sent: 634, lost: 62, sending: { messages: 1000, maxWaiting: 506, datagrams: 634, received: 572 } } }));
    expect(datagrams.figures.loss).toEqual({ value: '9.8%', detail: "62 of 634 datagrams through this server's TURN server", exact: (100 * 62) / 634 });
    const packed = speedResult(readings({ loss: { run: true, sent: 1000, lost: 176, sending: { messages: 1000, maxWaiting: 506, datagrams: undefined, received: undefined } } }));
    expect(packed.figures.loss.value).toBe('not trustworthy');
    expect(packed.loss).toBeUndefined();
    expect(packed.shared.lossPercent).toBeUndefined();
    expect(speedResult(readings({ loss: { run: true, error: 'the TURN server did not answer within 5\u00a0s' } })).figures.loss).toEqual({ value: 'not measured', detail: 'the TURN server did not answer within 5\u00a0s' });
    const skipped = speedResult(readings());
    expect(skipped.figures.loss).toEqual({ value: 'not measured', detail: 'this server has no TURN server to measure it through' });
    expect(skipped.lossCounted).toBe(false);
  });

  it('with no transfer timed: no rate, said so', () => {
    const r = speedResult(readings({ download: undefined, upload: { measure: measureDirection([], [], 8000, PROFILES.full), roundTrips: [], streams: 4 } }));
    expect(r.figures.upload).toMatchObject({ value: '–', detail: 'no transfer was timed' });
    expect(r.figures.download).toMatchObject({ value: '–', detail: 'no transfer was timed' });
    expect(r.figures.download.exact).toBeUndefined();
    expect(r.shared.downloadBps).toBeUndefined();
  });
});
