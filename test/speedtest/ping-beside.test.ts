// The reference the link matrix holds a client's loaded latency to (test/support/link-carried.ts):
// ping's answers read from `ping -D`'s own lines, the busy stretch the client's window is placed
// from taken from the router's counters, and a ping never answered still counted as sent. Inputs are written here as ping and /proc/net/dev
// give them, so a slip in the reference (a window off by its length, lost pings left out) fails
// here rather than passing or failing the timed suite for the wrong reason.
import { describe, expect, it } from 'vitest';
import { busyStretch, parseReplies, pingedBetween } from '../support/link-carried.js';

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
});
