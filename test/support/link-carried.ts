// What a shaped link carried while one client ran, and the latency its load made: the router
// namespace's own interface counters (/proc/<pid>/net/dev of a process parked in it), read every
// 100 ms, and `ping` to the server beside the client's run. The bytes out of the router toward the
// client are what the download got through the shaper, those toward the server what the upload
// got. A tbf peak is what the link may give, not what it gives: on this machine's veth pairs a
// 200 Mbit/s peak moved 150-190 from run to run as the machine was busy, so a client's burst is
// judged against what the link carried in that client's own run. Likewise a deep queue: loss-based
// flows fill 300 ms of it to a depth that differs from one load to the next (the page's loaded
// latency read 237.6 ms on the 5 Mbit/s one where ping beside the truth's bulk flows read 297.0,
// and 310.5 where it read 256.5 at 20 Mbit/s), so a client's loaded latency is held to ping beside
// its own load: the pings sent in the window the client measured, placed from the start of
// that direction's busy stretch on the router. Over the stretch's last five seconds instead, the
// CLI's upload read 289.0 ms against ping's 237.5 at 5 Mbit/s: the stretch runs on while the
// uploads in flight at the direction's end are answered and the queue drains, past the window.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './link-truth.js';

/** Ping's round trips beside one direction's load: their median and how many were answered. */
export interface PingedLoad {
  /** The median round trip of those answered, ms (undefined when none was). */
  loadedMs: number | undefined;
  pings: { answered: number; sent: number };
}

/** A client's measured window, ms since its direction began (as the clients report it). */
export type ClientWindow = readonly [number, number];

/** The fastest one-second average each way, Mbit/s, and ping beside each direction's load. */
export interface Carried {
  downPeakMbps: number;
  upPeakMbps: number;
  /**
   * Ping beside a direction's load over the client's own window, placed from the start of that
   * direction's busy stretch on the router (the last WINDOW_MS of the stretch when the client
   * gave none); undefined when the router saw no load that way.
   */
  pingedIn(direction: 'download' | 'upload', window: ClientWindow | undefined): PingedLoad | undefined;
  /**
   * What the link carried that way over the client's own window, Mbit/s, placed from where that
   * direction began to lead the other way (ledStart); undefined when it never did.
   */
  carriedIn(direction: 'download' | 'upload', window: ClientWindow): number | undefined;
}

export interface CarriedCount {
  /** Stops counting (after the last pings' answers could come back) and gives what the run carried. */
  stop(): Promise<Carried>;
}

const SAMPLE_MS = 100;
const SECOND_MS = 1000;
/** Ping's interval beside the load, ms. */
const PING_MS = 100;
/** The clients' measured window (working.ts PROFILES.full), for a client that gave none: the last this-many ms of a busy stretch. */
const WINDOW_MS = 5000;
/** A direction is busy in a 100 ms sample carrying at least this share of its fastest second (a boosted link's sustained rate is half its peak; the other way carries acknowledgements, a few percent). */
const BUSY_SHARE = 0.3;
/** Quiet samples a busy stretch may hold (a loss-based sender's recovery): 300 ms. */
const BUSY_GAP = 3;
/** How long a reply may take to come back after the client ends: a 300 ms queue, with room. */
const LAST_REPLY_MS = 1500;

/** A sample: the clock (ms since the epoch) and bytes sent so far. */
type Sample = readonly [number, number];

/** Bytes sent by `device` in the network namespace of `pid`, from its /proc/net/dev line. */
function txBytes(pid: number, device: string): number {
  const line = readFileSync(`/proc/${String(pid)}/net/dev`, 'utf8')
    .split('\n')
    .find((l) => l.trim().startsWith(`${device}:`));
  if (line === undefined) throw new Error(`${device} is not in the namespace of process ${String(pid)}`);
  // "dev: rx_bytes rx_packets ... (8 receive fields) tx_bytes ..."
  const fields = line.split(':')[1]?.trim().split(/\s+/) ?? [];
  return Number(fields[8]);
}

const rateMbps = (a: Sample, b: Sample) => ((b[1] - a[1]) * 8) / ((b[0] - a[0]) / 1000) / 1e6;

/**
 * The fastest one-second average of a counter sampled at `samples` (ms, bytes): over each sample
 * and the newest one at least a second before it, by their own times, so a late timer changes no
 * rate.
 */
function fastestSecondMbps(samples: readonly Sample[]): number {
  let best = 0;
  let from = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] ?? [0, 0];
    while (from + 1 < i && s[0] - (samples[from + 1]?.[0] ?? 0) >= SECOND_MS) from++;
    const s0 = samples[from] ?? [0, 0];
    if (s[0] - s0[0] >= SECOND_MS) best = Math.max(best, rateMbps(s0, s));
  }
  return best;
}

/** The longest busy stretch of a direction (ms since the epoch), or undefined when it was never busy. */
export function busyStretch(samples: readonly Sample[], peakMbps: number): { start: number; end: number } | undefined {
  let best: { start: number; end: number } | undefined;
  let start: number | undefined;
  let lastBusy = -1;
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] ?? [0, 0];
    const b = samples[i] ?? [0, 0];
    if (b[0] <= a[0] || rateMbps(a, b) < BUSY_SHARE * peakMbps) continue;
    if (start === undefined || i - lastBusy > BUSY_GAP + 1) start = a[0];
    lastBusy = i;
    if (best === undefined || b[0] - start > best.end - best.start) best = { start, end: b[0] };
  }
  return best;
}

/** A direction leads in a sample carrying at least this many times the other way's bytes (data against its acknowledgements). */
const LEAD_RATIO = 5;
/** ... and at least this rate, Mbit/s (the clients' idle round trips and ping carry less). */
const LEAD_FLOOR_MBPS = 1;
/** ... for at least this many samples in a row: the page's own files (some 300 kB toward the client) lead for one or two. */
const LEAD_SAMPLES = 5;

/**
 * When a direction's transfer began on the router (ms since the epoch): the start of the first
 * of LEAD_SAMPLES samples in a row in which it led the other way. Unlike busyStretch, no share
 * of the fastest second: on the unshaped path the rate swings between 2 and 20 Gbit/s within one
 * run as the two cores are shared, and a transfer's first half second ramps up from 1 Gbit/s.
 */
export function ledStart(samples: readonly Sample[], other: readonly Sample[]): number | undefined {
  const leads = (i: number) => {
    const a = samples[i - 1] ?? [0, 0];
    const b = samples[i] ?? [0, 0];
    if (b[0] <= a[0]) return false;
    const rate = rateMbps(a, b);
    return rate >= LEAD_FLOOR_MBPS && rate >= LEAD_RATIO * rateMbps(other[i - 1] ?? a, other[i] ?? b);
  };
  let run = 0;
  for (let i = 1; i < samples.length && i < other.length; i++) {
    run = leads(i) ? run + 1 : 0;
    if (run === LEAD_SAMPLES) return samples[i - LEAD_SAMPLES]?.[0];
  }
  return undefined;
}

/** The counter's bytes at time `at` (ms since the epoch), interpolated between the samples around it. */
function bytesAt(samples: readonly Sample[], at: number): number | undefined {
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1] ?? [0, 0];
    const b = samples[i] ?? [0, 0];
    if (at >= a[0] && at <= b[0]) return b[0] === a[0] ? a[1] : a[1] + ((b[1] - a[1]) * (at - a[0])) / (b[0] - a[0]);
  }
  return undefined;
}

/** The rate a counter carried from `from` to `to` (ms since the epoch), Mbit/s; undefined outside the samples. */
export function carriedBetween(samples: readonly Sample[], from: number, to: number): number | undefined {
  const a = bytesAt(samples, from);
  const b = bytesAt(samples, to);
  return a === undefined || b === undefined || to <= from ? undefined : rateMbps([from, a], [to, b]);
}

/** One answered ping: its sequence number and round trip, and when the answer came (ms since the epoch). */
interface Reply {
  seq: number;
  rttMs: number;
  receivedAt: number;
}

/** `ping -D`'s answered lines: "[1764323456.123456] 64 bytes from ...: icmp_seq=7 ttl=63 time=12.3 ms". */
export function parseReplies(out: string): Reply[] {
  return [...out.matchAll(/^\[([0-9.]+)\].*icmp_seq=(\d+).*time=([0-9.]+) ms/gm)].map((m) => ({ receivedAt: Number(m[1]) * 1000, seq: Number(m[2]), rttMs: Number(m[3]) }));
}

/**
 * When each sequence number 1..sentCount was sent (ms since the epoch): an answered ping's is its
 * arrival less its round trip; an unanswered one's is placed between the answered ones around it
 * by sequence (past the first or last answered one, at the mean interval between them). Ping's
 * interval is not exact: `ping -i 0.1` here sent every 104 ms, 0.6 s behind a 100 ms clock
 * after 150.
 */
function sendTimes(replies: readonly Reply[], sentCount: number): number[] {
  const known = [...replies].sort((a, b) => a.seq - b.seq).map((r) => [r.seq, r.receivedAt - r.rttMs] as const);
  const first = known[0];
  const last = known.at(-1);
  if (first === undefined || last === undefined) return [];
  const step = last[0] > first[0] ? (last[1] - first[1]) / (last[0] - first[0]) : PING_MS;
  const times: number[] = [];
  let k = 0;
  for (let seq = 1; seq <= sentCount; seq++) {
    while (k + 1 < known.length && (known[k + 1]?.[0] ?? Infinity) <= seq) k++;
    const [s0, t0] = known[k] ?? first;
    const next = known[k + 1];
    if (seq < first[0]) times.push(first[1] - (first[0] - seq) * step);
    else if (next === undefined || seq === s0) times.push(t0 + (seq - s0) * step);
    else times.push(t0 + ((seq - s0) * (next[1] - t0)) / (next[0] - s0));
  }
  return times;
}

/** The pings sent from `from` to `to` (ms since the epoch), a ping never answered still counted as sent. */
export function pingedBetween(replies: readonly Reply[], sentCount: number, from: number, to: number): PingedLoad {
  const sentAt = sendTimes(replies, sentCount);
  const inWindow = (seq: number) => {
    const at = sentAt[seq - 1];
    return at !== undefined && at >= from && at <= to;
  };
  let sent = 0;
  for (let seq = 1; seq <= sentCount; seq++) if (inWindow(seq)) sent++;
  const answered = replies.filter((r) => inWindow(r.seq)).map((r) => r.rttMs);
  return { loadedMs: median(answered), pings: { answered: answered.length, sent } };
}

/** Starts counting what the router namespace `router` sends out of `toClient` and `toServer`, with ping to `server` beside it. */
export function countCarried(router: string, toClient: string, toServer: string, server: string): CarriedCount {
  const parked = spawn('ip', ['netns', 'exec', router, 'sleep', 'infinity'], { stdio: 'ignore' });
  const pinger = spawn('ping', ['-D', '-n', '-i', String(PING_MS / 1000), server], { stdio: ['ignore', 'pipe', 'ignore'] });
  let pinged = '';
  pinger.stdout.on('data', (d: Buffer) => (pinged += d.toString()));
  const down: Sample[] = [];
  const up: Sample[] = [];
  const sample = () => {
    const pid = parked.pid;
    if (pid === undefined) return;
    try {
      const now = performance.timeOrigin + performance.now();
      down.push([now, txBytes(pid, toClient)]);
      up.push([now, txBytes(pid, toServer)]);
    } catch {
      // Before `ip netns exec` has moved into the namespace the process's /proc/net/dev is this
      // namespace's, without the router's devices: the next sample is taken from inside.
    }
  };
  const timer = setInterval(sample, SAMPLE_MS);
  return {
    async stop() {
      await sleep(LAST_REPLY_MS);
      clearInterval(timer);
      sample();
      parked.kill('SIGKILL');
      const closed = once(pinger, 'close');
      pinger.kill('SIGINT');
      await closed;
      if (down.length < 2) throw new Error('the router namespace was never counted');
      const replies = parseReplies(pinged);
      const sentCount = Number(/(\d+) packets transmitted/.exec(pinged)?.[1] ?? Math.max(0, ...replies.map((r) => r.seq)));
      const downPeakMbps = fastestSecondMbps(down);
      const upPeakMbps = fastestSecondMbps(up);
      const stretches = { download: busyStretch(down, downPeakMbps), upload: busyStretch(up, upPeakMbps) };
      const led = { download: ledStart(down, up), upload: ledStart(up, down) };
      return {
        downPeakMbps,
        upPeakMbps,
        pingedIn(direction, window) {
          const stretch = stretches[direction];
          if (stretch === undefined) return undefined;
          const [from, to] = window === undefined ? [stretch.end - WINDOW_MS, stretch.end] : [stretch.start + window[0], stretch.start + window[1]];
          return pingedBetween(replies, sentCount, from, to);
        },
        carriedIn(direction, window) {
          const start = led[direction];
          return start === undefined ? undefined : carriedBetween(direction === 'download' ? down : up, start + window[0], start + window[1]);
        },
      };
    },
  };
}
