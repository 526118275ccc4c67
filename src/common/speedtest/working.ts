// A direction of the speed test measured under working conditions: the link kept busy by
// parallel streams with no pause between transfers, the bytes counted as they move, the rate
// taken over a window once it is steady, and round trips timed on their own connection through
// that window. The rules, in the spirit of the IETF draft "Responsiveness under Working
// Conditions" (draft-ietf-ippm-responsiveness, §4.4: a moving average of the goodput that stops
// changing), are pure so the page and `netdiag speedtest` report alike and the rules are
// unit-tested over recorded series (working.test.ts).
import { percentile } from '../statistics.js';

/** Bytes moved by all of a direction's streams together, counted up to `atMs` (ms since the direction began). */
export interface Progress {
  atMs: number;
  bytes: number;
}

/** A round trip taken beside the load: when it was sent (ms since the direction began) and how long it took. */
export interface RoundTrip {
  atMs: number;
  ms: number;
}

/** How long a direction may load the link, and the window it measures over. */
export interface LoadProfile {
  /** The direction ends here whatever the rate did. */
  maxMs: number;
  /** It ends earlier once the rate has been steady this long; also the window when it never was. */
  windowMs: number;
}

/**
 * The default test's directions: at most 10 s each (the whole test, idle latency and packet
 * loss included, within 25 s), measured over 5 s of steady rate; the light test's half that.
 */
export const PROFILES: Record<'full' | 'light', LoadProfile> = {
  full: { maxMs: 10_000, windowMs: 5_000 },
  light: { maxMs: 5_000, windowMs: 2_500 },
};

/** The profile of a mode: the light test's for `light`, the default test's for any other. */
export const profileOf = (mode: string): LoadProfile => (mode === 'light' ? PROFILES.light : PROFILES.full);

/**
 * Parallel streams per direction. One TCP flow often cannot fill a link (its window on a long
 * path, a loss that halves it); several together can, as the responsiveness draft loads a link.
 * Over HTTP/1.1 a browser opens six connections to an origin: four for the load leave the round
 * trips one of their own.
 */
export const STREAMS = 4;

/** An upload stream's first body, bytes; each next one is sized by nextUploadBytes. */
export const FIRST_UPLOAD_BYTES = 256_000;
/** An upload lasts about this long at its stream's last rate: few requests on a fast link, a count at least twice a second on a slow one. */
const UPLOAD_TARGET_MS = 500;
const MIN_UPLOAD_BYTES = 64_000;
/** The largest upload body, whatever the server allows: the one buffer a client keeps stays this small. */
export const MAX_UPLOAD_BYTES = 64_000_000;

/** The next upload of a stream whose last `bytes` took `ms`: about UPLOAD_TARGET_MS at that rate, within the bounds and `cap`. */
export function nextUploadBytes(bytes: number, ms: number, cap: number): number {
  const rated = ms > 0 ? (bytes * UPLOAD_TARGET_MS) / ms : cap;
  return Math.round(Math.min(cap, MAX_UPLOAD_BYTES, Math.max(MIN_UPLOAD_BYTES, rated)));
}

/**
 * At most this many round trips a direction under load, one after another with a pause between,
 * so a whole test (about 20 idle, 100 loaded and the transfers) stays well inside the server's
 * default 600 speed-test requests a minute per caller, twice over.
 */
const ROUND_TRIPS_PER_DIRECTION = 50;
/** The pause after each round trip under load: 200 ms in the default test, 100 in the light one; 10 to 25 in a 5 s window on any link. */
export const probeGapMs = (profile: LoadProfile): number => profile.maxMs / ROUND_TRIPS_PER_DIRECTION;

/** The rate is read in intervals of this length (the draft's interval is 1 s; a 10 s direction needs finer). */
export const INTERVAL_MS = 250;
/** The moving average spans this many intervals: one second. */
const AVERAGE_OF = 4;
/**
 * Steady: every moving average of the span within this share of the smallest. A CUBIC sawtooth
 * under four streams moves the one-second average by a few percent; a shaper's burst ending
 * halves it.
 */
const STEADY_SPREAD = 0.1;
/** The burst must run at least this much above the sustained rate. */
const MIN_PEAK_RATIO = 1.25;
/** And for at least this long, from the start of the load: a shaper's offer, not one fast interval. */
const MIN_BURST_MS = 1_000;
/** The burst begins within this time of the start (slow start, the first connections). */
const BURST_STARTS_WITHIN_MS = 1_000;
/** The window's own fast intervals stay at least this far under the peak. */
const LATE_MARGIN = 1.1;
/**
 * And it carries at least this many bytes above the sustained rate: less is a shaper's ordinary
 * bucket (tbf's is a few kB to a few hundred), no offer a user could see.
 */
export const MIN_BURST_BYTES = 1_000_000;

/** What a link gave before it settled: its peak rate and the bytes it carried above the sustained rate. */
export interface Burst {
  peakBps: number;
  bytes: number;
  /** From the start of the load to the end of the burst. */
  durationMs: number;
}

/** The rate over the measured window. */
interface Sustained {
  bps: number;
  /** The window, ms since the direction began. */
  startMs: number;
  endMs: number;
  /** Bytes moved in the window. */
  bytes: number;
  /** True when the window is a steady stretch; false when the rate never settled and the window is the last part. */
  steady: boolean;
}

export interface DirectionMeasure {
  sustained: Sustained | undefined;
  burst: Burst | undefined;
  /** The median round trip sent within the window, and how many there were. */
  loaded: { ms: number; count: number } | undefined;
  /** The rate in each INTERVAL_MS from the start, bits per second (for charts and exports). */
  rates: number[];
}

/** Bytes counted by `t`, read linearly between the counts around it (an upload is counted as each transfer ends). */
export function bytesAt(progress: readonly Progress[], t: number): number {
  let before: Progress = { atMs: 0, bytes: 0 };
  for (const p of progress) {
    if (p.atMs <= t) {
      before = p;
      continue;
    }
    const span = p.atMs - before.atMs;
    return span <= 0 ? p.bytes : before.bytes + ((p.bytes - before.bytes) * (t - before.atMs)) / span;
  }
  return before.bytes;
}

/**
 * How far the counts reach by `nowMs`: the last count's time. An upload is counted as each of its
 * transfers ends, so the time after the last end holds bytes not yet counted, not a slower link.
 */
function countedUntil(progress: readonly Progress[], nowMs: number): number {
  let last = 0;
  for (const p of progress) if (p.atMs <= nowMs) last = Math.max(last, p.atMs);
  return last;
}

/** The rate in each whole interval up to `untilMs`, bits per second (one pass over the counts). */
function intervalRates(progress: readonly Progress[], untilMs: number): number[] {
  const rates: number[] = [];
  let previous = 0;
  let k = 0;
  let before: Progress = { atMs: 0, bytes: 0 };
  for (let end = INTERVAL_MS; end <= untilMs; end += INTERVAL_MS) {
    while (k < progress.length && (progress[k]?.atMs ?? Infinity) <= end) before = progress[k++] ?? before;
    const after = progress[k];
    const span = after === undefined ? 0 : after.atMs - before.atMs;
    const bytes = after === undefined || span <= 0 ? before.bytes : before.bytes + ((after.bytes - before.bytes) * (end - before.atMs)) / span;
    rates.push(((bytes - previous) * 8 * 1000) / INTERVAL_MS);
    previous = bytes;
  }
  return rates;
}

/** One-second moving averages: `averages[i]` ends with interval `i + AVERAGE_OF - 1`. */
function movingAverages(rates: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = AVERAGE_OF - 1; i < rates.length; i++) {
    let sum = 0;
    for (let k = i - AVERAGE_OF + 1; k <= i; k++) sum += rates[k] ?? 0;
    out.push(sum / AVERAGE_OF);
  }
  return out;
}

/**
 * The steady stretch at the end: the first interval from which every one-second average up to
 * the last stays within STEADY_SPREAD of the smallest, or undefined when not even the last two
 * averages agree. Returned as the index of the stretch's first interval.
 */
function steadyFrom(rates: readonly number[]): number | undefined {
  const averages = movingAverages(rates);
  const last = averages.length - 1;
  if (last < 1) return undefined;
  let low = averages[last] ?? 0;
  let high = low;
  let first: number | undefined;
  for (let i = last; i >= 0; i--) {
    const a = averages[i] ?? 0;
    const lo = Math.min(low, a);
    const hi = Math.max(high, a);
    if (lo <= 0 || hi > lo * (1 + STEADY_SPREAD)) break;
    low = lo;
    high = hi;
    first = i;
  }
  // An average over intervals first..first+3 is in the stretch: the stretch starts with its intervals.
  return first === undefined || first === last ? undefined : first;
}

/** The span of steady rate that ends at `nowMs`, ms (0 when the rate is not steady). */
export function steadyMs(progress: readonly Progress[], nowMs: number): number {
  const rates = intervalRates(progress, countedUntil(progress, nowMs));
  const from = steadyFrom(rates);
  return from === undefined ? 0 : (rates.length - from) * INTERVAL_MS;
}

/** Whether a direction has measured enough: steady for a window's length, or out of time. */
export function directionDone(progress: readonly Progress[], nowMs: number, profile: LoadProfile): boolean {
  return nowMs >= profile.maxMs || steadyMs(progress, nowMs) >= profile.windowMs;
}

/**
 * The burst before the window, if the link gave one: a stretch of at least a second that starts
 * within the first second, runs at least a quarter above the sustained rate, carries a megabyte
 * or more above it, and is never reached again in the window (whose fast intervals stay a tenth
 * under its peak). One slow interval late in a noisy fast run moves none of this: the window is
 * read whole, and the early stretch must outrun all of it.
 */
function burstOf(rates: readonly number[], windowFrom: number, windowTo: number, sustainedBps: number): Burst | undefined {
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < windowFrom; i++) {
    if ((rates[i] ?? 0) < MIN_PEAK_RATIO * sustainedBps) continue;
    let j = i;
    while (j < windowFrom && (rates[j] ?? 0) >= MIN_PEAK_RATIO * sustainedBps) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestStart < 0 || bestStart * INTERVAL_MS > BURST_STARTS_WITHIN_MS || bestLength * INTERVAL_MS < MIN_BURST_MS) return undefined;
  const stretch = rates.slice(bestStart, bestStart + bestLength);
  const peakBps = percentile([...stretch], 0.5) ?? 0;
  const windowHigh = percentile(rates.slice(windowFrom, windowTo), 0.9) ?? Infinity;
  if (windowHigh * LATE_MARGIN > peakBps) return undefined;
  const bytes = stretch.reduce((sum, r) => sum + ((r - sustainedBps) * INTERVAL_MS) / 1000 / 8, 0);
  if (bytes < MIN_BURST_BYTES) return undefined;
  return { peakBps, bytes: Math.round(bytes), durationMs: (bestStart + bestLength) * INTERVAL_MS };
}

/**
 * A direction's figures from what it counted until `endMs`: the sustained rate over the steady
 * stretch at the end (at least a window's length of it when there is one, else the last window
 * whatever it held), bytes over time by the clock across every stream; the burst before it, if
 * any; and the median round trip of those sent within the window.
 */
export function measureDirection(progress: readonly Progress[], roundTrips: readonly RoundTrip[], endMs: number, profile: LoadProfile): DirectionMeasure {
  const rates = intervalRates(progress, countedUntil(progress, endMs));
  const wholeEnd = rates.length * INTERVAL_MS;
  const total = bytesAt(progress, wholeEnd);
  if (rates.length === 0 || total <= 0) return { sustained: undefined, burst: undefined, loaded: undefined, rates };
  const from = steadyFrom(rates);
  // Steady for a whole window, as directionDone ends a direction; a shorter steady stretch (a
  // direction that ran out of time) is read like a rate that never settled, so every figure
  // rests on a window's length of data.
  const steady = from !== undefined && (rates.length - from) * INTERVAL_MS >= profile.windowMs;
  // Not steady: the last window's length of what was counted (a direction runs twice its window
  // at most, so the start's ramp stays out of it).
  const fallback = Math.max(0, rates.length - Math.round(profile.windowMs / INTERVAL_MS));
  const windowFrom = steady ? from : fallback;
  const startMs = windowFrom * INTERVAL_MS;
  const bytes = total - bytesAt(progress, startMs);
  const bps = (bytes * 8 * 1000) / (wholeEnd - startMs);
  const sustained: Sustained = { bps, startMs, endMs: wholeEnd, bytes, steady };
  const burst = steady ? burstOf(rates, windowFrom, rates.length, bps) : undefined;
  const inWindow = roundTrips.filter((r) => r.atMs >= startMs && r.atMs <= wholeEnd).map((r) => r.ms);
  const median = percentile(inWindow, 0.5);
  return { sustained, burst, loaded: median === undefined ? undefined : { ms: median, count: inWindow.length }, rates };
}
