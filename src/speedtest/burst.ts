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
  const origin = first.endMs - first.duration;
  let bytes = 0;
  const points = ordered.map((t) => ({ t: t.endMs - origin, bytes: (bytes += t.bytes) }));
  const k = bend(points);
  const knee = k === undefined ? undefined : points[k];
  if (k === undefined || knee === undefined) return whole;
  const before = ordered.slice(0, k + 1);
  // The first transfer after the bend may have started on the bucket's last bytes: with enough
  // after it to stand for the link, it is left out of the sustained rate.
  const after = ordered.length - (k + 1) > MIN_SUSTAINED_TRANSFERS ? ordered.slice(k + 2) : ordered.slice(k + 1);
  const lastEnd = points[points.length - 1]?.t ?? 0;
  const early = timed(before);
  const late = timed(after);
  const sustained = bandwidthOf(after);
  // The peak as the engine's rule reads a rate: the 90th percentile of the burst's transfers
  // (its first, small ones are slowed by the round trip and TCP's slow start, not the link).
  const peak = percentile(early, 0.9);
  const lateMedian = percentile(late, 0.5);
  const lateHigh = percentile(late, 0.9);
  if (sustained === undefined || peak === undefined || lateMedian === undefined || lateHigh === undefined) return whole;
  if (late.length < MIN_SUSTAINED_TRANSFERS || lastEnd - knee.t < MIN_SUSTAINED_MS) return whole;
  // Faster by a quarter than the rate after, which stays down: its own fast transfers fall
  // well short of the peak.
  if (peak < MIN_PEAK_RATIO * lateMedian || lateHigh * LATE_MARGIN > peak) return whole;
  const above = knee.bytes - (sustained.bps / 8) * (knee.t / 1000);
  if (above < MIN_BURST_BYTES) return whole;
  return { sustained, burst: { peakBps: peak, bytes: Math.round(above), durationMs: knee.t } };
}
