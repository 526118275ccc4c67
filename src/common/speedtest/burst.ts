// The rate a link sustains, and the burst it gives a new flow first, from a direction's
// transfers in the order they ran. Many cable and fixed-wireless links hand a flow that starts
// after a pause a token bucket at a higher rate ("PowerBoost": say 40 Mbit/s for the first few
// MB, then 20): every transfer made while the bucket lasts moves at the peak, and the 90th
// percentile of per-transfer rates reports the burst as the link's speed. Here the transfers are
// read as one series of bytes over time; where it bends down once (fast, then slower for good),
// the part after the bend is the sustained rate and the part before it the burst, named with
// its peak and how much it carried above the sustained rate. The page and `netdiag speedtest`
// both report by these rules.
import { percentile } from '../statistics.js';
import { bandwidthOf, MIN_BANDWIDTH_REQUEST_MS, type Bandwidth, type Timing } from './metrics.js';

/** One transfer as the series needs it: its timing and when it ended, in ms on one clock. */
export interface TimedTransfer extends Timing {
  /** Bytes moved (the body, with the response head for a download as Resource Timing counts it). */
  bytes: number;
  /** When the transfer ended, ms on any clock shared by the direction's transfers. */
  endMs: number;
}

/** What a link gave before it settled: its peak rate and the bytes it carried above the sustained rate. */
export interface Burst {
  peakBps: number;
  bytes: number;
  /** From the first transfer's start to the bend. */
  durationMs: number;
}

interface DirectionRates {
  /** The rate the link sustains: the engine's rule over the transfers after the burst, or over all. */
  sustained: Bandwidth | undefined;
  burst: Burst | undefined;
}

/**
 * The burst must run at least this much above the sustained rate: a plain link's transfers
 * vary by some percent from one to the next (a CUBIC sawtooth, scheduling), never by a quarter
 * for a second on end.
 */
const MIN_PEAK_RATIO = 1.25;
/**
 * And carry at least this many bytes above the sustained rate: less is a shaper's ordinary
 * bucket (tbf's is a few kB to a few hundred), which refills in the gaps between transfers and
 * is no offer a user could see.
 */
export const MIN_BURST_BYTES = 1_000_000;
/** The sustained part's fast transfers stay at least this far under the peak. */
const LATE_MARGIN = 1.1;
/** What the sustained part must last, and hold, to stand for the link. */
const MIN_SUSTAINED_MS = 1_000;
const MIN_SUSTAINED_TRANSFERS = 2;

const timed = (ts: TimedTransfer[]) => ts.filter((t) => t.bps !== undefined && t.bps > 0 && t.duration >= MIN_BANDWIDTH_REQUEST_MS).map((t) => t.bps ?? 0);

/**
 * The bend of the cumulative bytes: the split into a first part and a second, each fitted by
 * the straight line from its own start to its own end, with the least squared error. The
 * first part runs from the first transfer's start (time 0, no bytes) to the end of transfer
 * `k`, the second from there to the end of the last.
 */
function bend(points: { t: number; bytes: number }[]): number | undefined {
  const n = points.length;
  const last = points[n - 1];
  if (last === undefined) return undefined;
  let best: { k: number; error: number } | undefined;
  for (let k = 0; k < n - MIN_SUSTAINED_TRANSFERS; k++) {
    const knee = points[k];
    if (knee === undefined || knee.t <= 0 || last.t <= knee.t) continue;
    const early = knee.bytes / knee.t;
    const late = (last.bytes - knee.bytes) / (last.t - knee.t);
    let error = 0;
    for (let i = 0; i < n; i++) {
      const p = points[i] ?? knee;
      const fit = i <= k ? early * p.t : knee.bytes + late * (p.t - knee.t);
      error += (p.bytes - fit) ** 2;
    }
    if (best === undefined || error < best.error) best = { k, error };
  }
  return best?.k;
}

/**
 * The sustained rate and the burst, if there was one, of one direction's transfers (any
 * order; they are put in the order they ended). A burst is named only when the series bends
 * down once and stays down: the transfers before the bend run (at their 90th percentile, the
 * peak) at least a quarter faster than the median of those after it, whose own 90th percentile
 * stays a tenth under the peak, the part after lasts at least a second with two timed
 * transfers, and the bytes carried above the sustained rate come to a megabyte or more. Otherwise the figure is the engine's rule over every transfer, as before.
 */
export function directionRates(transfers: TimedTransfer[]): DirectionRates {
  const whole: DirectionRates = { sustained: bandwidthOf(transfers), burst: undefined };
  if (transfers.length < MIN_SUSTAINED_TRANSFERS + 2) return whole;
  const ordered = [...transfers].sort((a, b) => a.endMs - b.endMs);
  const first = ordered[0];
  if (first === undefined) return whole;
  // Bytes over the time the transfers took, their gaps left out: a client that pauses between
  // transfers (the page's engine reads each answer and prepares the next body, ~170 ms before a
  // 25 MB upload) would otherwise bend the series where the link did not.
  let bytes = 0;
  let active = 0;
  const points = ordered.map((t) => ({ t: (active += t.duration), bytes: (bytes += t.bytes) }));
  const k = bend(points);
  const knee = k === undefined ? undefined : points[k];
  if (k === undefined || knee === undefined) return whole;
  const before = ordered.slice(0, k + 1);
  const after = ordered.slice(k + 1);
  // The first transfer after the bend may have started on the bucket's last bytes: it is left
  // out of the sustained rate, and with only two after the bend the last alone stands for it.
  const settled = after.length > MIN_SUSTAINED_TRANSFERS ? after.slice(1) : after.slice(-1);
  const lastEnd = points[points.length - 1]?.t ?? 0;
  const early = timed(before);
  const late = timed(after);
  const raw = bandwidthOf(after);
  // The peak as the engine's rule reads a rate: the 90th percentile of the burst's transfers
  // (its first, small ones are slowed by the round trip and TCP's slow start, not the link).
  const peak = percentile(early, 0.9);
  const lateMedian = percentile(late, 0.5);
  const lateHigh = percentile(late, 0.9);
  if (raw === undefined || peak === undefined || lateMedian === undefined || lateHigh === undefined) return whole;
  if (late.length < MIN_SUSTAINED_TRANSFERS || lastEnd - knee.t < MIN_SUSTAINED_MS) return whole;
  // Faster by a quarter than the rate after, which stays down: its own fast transfers fall
  // well short of the peak.
  if (peak < MIN_PEAK_RATIO * lateMedian || lateHigh * LATE_MARGIN > peak) return whole;
  // Each transfer after the bend, read for what the link sustains: the tokens its gap before it
  // refilled went at the peak (gapCorrected).
  const sustained = bandwidthOf(settled.map((t) => ({ ...t, bps: gapCorrected(t, gapBefore(ordered, ordered.indexOf(t)), peak) })));
  if (sustained === undefined) return whole;
  const above = knee.bytes - (sustained.bps / 8) * (knee.t / 1000);
  if (above < MIN_BURST_BYTES) return whole;
  return { sustained, burst: { peakBps: peak, bytes: Math.round(above), durationMs: knee.t } };
}

/** The idle time before a transfer: from the end of the one before it to its own start, ms. */
function gapBefore(ordered: readonly TimedTransfer[], i: number): number {
  const t = ordered[i];
  const previous = i > 0 ? ordered[i - 1] : undefined;
  return t === undefined || previous === undefined ? 0 : Math.max(0, t.endMs - t.duration - previous.endMs);
}

/**
 * A transfer's rate with its own small burst taken out. While the link idles between two
 * transfers its bucket refills at the sustained rate R, and the next transfer sends those tokens
 * at the peak P first: tokens R·gap carry R·gap·P/(P−R) bytes at P, the rest goes at R. So the
 * transfer's time is that share at P plus the rest at R; R is found by bisection between a third
 * of the transfer's own rate and the rate itself (the time only falls as R grows). A transfer
 * right after another (the command line's, 1-2 ms apart) is left as it is.
 */
function gapCorrected(t: TimedTransfer, gapMs: number, peakBps: number): number | undefined {
  const measured = t.bps;
  if (measured === undefined || measured <= 0 || t.duration <= 0 || gapMs <= 0 || measured >= peakBps) return measured;
  const seconds = t.duration / 1000;
  const timeAt = (rate: number): number => {
    const tokens = rate * (gapMs / 1000);
    const atPeak = Math.min(8 * t.bytes, (tokens * peakBps) / (peakBps - rate));
    return atPeak / peakBps + (8 * t.bytes - atPeak) / rate;
  };
  let low = measured / 3;
  let high = measured;
  for (let i = 0; i < 40; i++) {
    const mid = (low + high) / 2;
    if (timeAt(mid) > seconds) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}
