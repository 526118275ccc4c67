// The reference the link matrix holds a client's loaded latency to (test/support/link-carried.ts):
// ping's answers read from `ping -D`'s own lines, the busy stretch the client's window is placed
// from taken from the router's counters, and a ping never answered still counted as sent. Inputs are written here as ping and /proc/net/dev
// give them, so a slip in the reference (a window off by its length, lost pings left out) fails
// here rather than passing or failing the timed suite for the wrong reason.
// Also the truth's burst (test/support/link-truth.ts, rateTruth): the bytes a link's bucket carried
// above its rate, which a dip of an interval or two must not cut short.
import { describe, expect, it } from 'vitest';
import { busyStretch, carriedBetween, ledStart, parseReplies, pingedBetween } from '../support/link-carried.js';
import { rateTruth } from '../support/link-truth.js';

const T0 = 1_764_000_000_000;

/** `ping -D -n -i 0.1` output for sequences 1..count sent every `everyMs` from T0, with `rtt(seq)` (undefined: no answer). */
function pingOutput(count: number, rtt: (seq: number) => number | undefined, everyMs = 100): string {
  const lines = ['PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.'];
  for (let seq = 1; seq <= count; seq++) {
    const ms = rtt(seq);
    if (ms === undefined) continue;
    const at = (T0 + (seq - 1) * everyMs + ms) / 1000;
    lines.push(`[${at.toFixed(6)}] 64 bytes from 10.0.0.2: icmp_seq=${String(seq)} ttl=63 time=${ms.toFixed(2)} ms`);
  }
  lines.push('', '--- 10.0.0.2 ping statistics ---', `${String(count)} packets transmitted, ${String(count)} received, 0% packet loss, time 9000ms`);
  return lines.join('\n');
}

describe('ping beside a client\'s load', () => {
  it('reads the sequence, round trip and arrival of each answered line', () => {
    const replies = parseReplies(pingOutput(3, (seq) => (seq === 2 ? undefined : 250.5)));
    expect(replies.map((r) => r.seq)).toEqual([1, 3]);
    expect(replies[0]?.rttMs).toBe(250.5);
    expect(replies[1]?.receivedAt).toBeCloseTo(T0 + 200 + 250.5, 0);
  });

  it('takes the pings sent within a window, answered or not', () => {
    // 20 s of pings: 10 ms before 10 s, 300 ms from then; every fourth unanswered from 10 s on.
    const out = pingOutput(200, (seq) => (seq <= 100 ? 10 : seq % 4 === 0 ? undefined : 300));
    const replies = parseReplies(out);
    // A window of 13-18 s: sequences 131..181.
    const read = pingedBetween(replies, 200, T0 + 13_000, T0 + 18_000);
    expect(read.loadedMs).toBe(300);
    expect(read.pings.sent).toBe(51);
    expect(read.pings.answered).toBe(51 - 13);
    // 7-12 s reaches back into the idle pings: 31 at 10 ms, 20 at 300 ms.
    expect(pingedBetween(replies, 200, T0 + 7_000, T0 + 12_000).loadedMs).toBe(10);
  });

  it('places each ping by when it was sent, not by a 100 ms clock ping does not keep', () => {
    // Sent every 104 ms (as ping -i 0.1 did here): 15-16 s holds sequences 146..154, 150 unanswered.
    const replies = parseReplies(pingOutput(200, (seq) => (seq === 150 ? undefined : seq < 150 ? 100 : 200), 104));
    const read = pingedBetween(replies, 200, T0 + 15_000, T0 + 16_000);
    expect(read.pings).toEqual({ answered: 8, sent: 9 });
    expect(read.loadedMs).toBe(150);
  });

  it('finds the busy stretch where the direction carries its load, across a short dip', () => {
    // 100 ms samples: 2 s idle, 8 s at 20 Mbit/s with a 200 ms dip at 5 s, then acknowledgements only.
    const samples: [number, number][] = [];
    let bytes = 0;
    for (let i = 0; i <= 150; i++) {
      const t = T0 + i * 100;
      const loaded = i > 20 && i <= 100 && !(i > 50 && i <= 52);
      bytes += loaded ? 250_000 : 2_000;
      samples.push([t, bytes]);
    }
    expect(busyStretch(samples, 20)).toEqual({ start: T0 + 20 * 100, end: T0 + 100 * 100 });
    expect(busyStretch(samples.slice(0, 15), 20)).toBeUndefined();
  });

  it("places an unshaped run's window from where its direction first led, and reads what the router carried in it", () => {
    // 100 ms samples over 12 s. Toward the client: 1 s of idle round trips (1 kB a sample each
    // way) with the page's files in two of them (150 kB each, 12 Mbit/s: led, but not for long), then a download that ramps at 1 Gbit/s for 0.5 s (under a third of its fastest second,
    // so busyStretch would start later) and swings between 20 and 2 Gbit/s second by second, with
    // acknowledgements coming back at a fiftieth of it.
    const down: [number, number][] = [];
    const up: [number, number][] = [];
    let d = 0;
    let u = 0;
    const gbps = (i: number) => (i <= 10 ? 0 : i <= 15 ? 1 : Math.floor(i / 10) % 2 === 0 ? 20 : 2);
    for (let i = 0; i <= 120; i++) {
      const perSample = (gbps(i) * 1e9) / 8 / 10;
      d += perSample > 0 ? perSample : i === 3 || i === 4 ? 150_000 : 1000;
      u += perSample > 0 ? perSample / 50 : 1000;
      down.push([T0 + i * 100, d]);
      up.push([T0 + i * 100, u]);
    }
    const start = ledStart(down, up);
    expect(start).toBe(T0 + 1000);
    expect(ledStart(up, down)).toBeUndefined();
    // The window [5 s, 10 s] of the download: the samples ending at 6.1..11.0 s, 61..69, 80..89 and
    // 100..109 at 20 Gbit/s (29), 70..79, 90..99 and 110 at 2 (21).
    expect(carriedBetween(down, (start ?? 0) + 5000, (start ?? 0) + 10_000)).toBeCloseTo((29 * 20_000 + 21 * 2000) / 50, 6);
    // Half a sample in, interpolated: 50 ms of the last 1 Gbit/s sample and 50 ms of the first 2 Gbit/s.
    expect(carriedBetween(down, T0 + 1450, T0 + 1550)).toBeCloseTo(1500, 6);
    expect(carriedBetween(down, T0 + 11_000, T0 + 13_000)).toBeUndefined();
  });
});

describe("the truth's burst (rateTruth, test/support/link-truth.ts)", () => {
  // 100 ms rates as the truth's transfers read them: the first interval is the connections'
  // start, then a 200 Mbit/s bucket over a 100 Mbit/s rate for 1.6 s, then the rate for 10 s.
  const SURPLUS_MB_PER_BIN = ((200 - 100) * 1e6 * 0.1) / 8 / 1e6; // 1.25 MB
  const rates = (burst: readonly number[]) => [40, ...burst, ...Array.from({ length: 100 }, () => 100)];
  const bucket = Array.from({ length: 16 }, () => 200);

  it('counts the whole bucket', () => {
    const truth = rateTruth(rates(bucket));
    expect(truth.sustainedMbps).toBe(100);
    expect(truth.burstBytes / 1e6).toBeCloseTo(16 * SURPLUS_MB_PER_BIN, 6);
  });

  it('counts across one or two intervals that dip under the bar (the scheduler held a side), less what they fell short', () => {
    const dipped = bucket.map((rate, i) => (i === 4 || i === 9 || i === 10 ? 90 : rate));
    const dip = ((90 - 100) * 1e6 * 0.1) / 8 / 1e6;
    expect(rateTruth(rates(dipped)).burstBytes / 1e6).toBeCloseTo(13 * SURPLUS_MB_PER_BIN + 3 * dip, 6);
  });

  it('ends at three intervals in a row under the bar, counting nothing after them', () => {
    const ended = bucket.map((rate, i) => (i >= 4 && i <= 6 ? 100 : rate));
    expect(rateTruth(rates(ended)).burstBytes / 1e6).toBeCloseTo(4 * SURPLUS_MB_PER_BIN, 6);
  });

  it('finds no burst on a link without a bucket', () => {
    expect(rateTruth(rates([100, 104, 98, 101])).burstBytes).toBe(0);
  });
});
