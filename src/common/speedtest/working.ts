// A direction of the speed test measured under working conditions: the link kept busy by
// parallel streams with no pause between transfers, the bytes counted as they move, the rate
// taken over a window once it is steady, and round trips timed on their own connection through
// that window. The rules, in the spirit of the IETF draft "Responsiveness under Working
// Conditions" (draft-ietf-ippm-responsiveness, §4.4: a moving average of the goodput that stops
// changing), are pure so the page and `netdiag speedtest` report alike and the rules are
// unit-tested over recorded series (working.test.ts).
import { percentile } from '../statistics.js';
import type { BodyTiming } from './server-timing.js';

/** Bytes moved by all of a direction's streams together, counted up to `atMs` (ms since the direction began). */
export interface ByteCount {
  atMs: number;
  bytes: number;
}

/** A round trip taken beside the load: when it was sent (ms since the direction began) and how long it took. */
export interface RoundTrip {
  atMs: number;
  ms: number;
}

/**
 * An upload as the server received it: its bytes arrived over [startMs, endMs] (ms since the
 * direction began) on stream `stream`, and, when the server said, a quarter, half and three
 * quarters of them by `quarters` (receivedUpload).
 */
export interface Received {
  stream: number;
  startMs: number;
  endMs: number;
  bytes: number;
  quarters?: readonly number[];
}

/**
 * An upload answered at `endMs` that was sent at `sentMs`: its bytes arrived from `endMs` less
 * the body's time (no earlier than it was sent), or, from a server that does not say, from when
 * it was sent; its quarters where the server gave them, kept in order within that span.
 */
export function receivedUpload(stream: number, bytes: number, sentMs: number, endMs: number, timing: BodyTiming | undefined): Received {
  if (timing === undefined) return { stream, bytes, startMs: sentMs, endMs };
  const startMs = Math.max(sentMs, endMs - timing.ms);
  let last = startMs;
  const quarters = timing.quarters.map((q) => (last = Math.min(endMs, Math.max(last, startMs + q))));
  return { stream, bytes, startMs, endMs, ...(quarters.length === 3 ? { quarters } : {}) };
}

/** An upload's bytes arrived by `t`: linear between its start, its quarters and its end. */
function arrivedBy(r: Received, t: number): number {
  if (t >= r.endMs) return r.bytes;
  if (t <= r.startMs) return 0;
  const times = [r.startMs, ...(r.quarters ?? []), r.endMs];
  const step = r.bytes / (times.length - 1);
  for (let i = 1; i < times.length; i++) {
    const to = times[i] ?? r.endMs;
    if (t > to) continue;
    const from = times[i - 1] ?? r.startMs;
    return step * (i - 1) + (to > from ? (step * (t - from)) / (to - from) : step);
  }
  return r.bytes;
}

/**
 * A stream whose last answer is this much older than the newest answer of any stream is stalled:
 * an upload sized to last a second (nextUploadBytes) has run three. The counts do not wait for
 * it: on 5 Mbit/s with a 5 ms queue (two frames) one stream of four sat out retransmission
 * timeouts for eight seconds while the others filled the link, and waiting for it left the
 * measured window 1.25 s long. What its upload moved before it answers is left out until it does
 * (a stream that sits out timeouts moves next to nothing).
 */
const STALLED_MS = 3_000;

/**
 * When an upload direction ends, no upload is started after it, and those in flight are given
 * this long to be answered before they are given up: their bytes up to the end are counted, not
 * left out. Every stream has one in flight at the end, and one whose share of the link grew a
 * moment before was sized to match and takes seconds; the counts stop at the oldest answer but
 * for a stream STALLED_MS behind, so at the end a stream that was moving bytes was read as one
 * that moved none. On 5 Mbit/s with a two-frame queue the router carried 4.9 to 5.0 Mbit/s in
 * every quarter second of an upload that the command line read as 2.4 to 4.4 (one run in three),
 * and as 3.4 against a truth of 4.8 in one CI run. Answered here, each upload's bytes are placed
 * in the time they arrived, and the counts end where the direction did (countedUntil).
 */
export const UPLOAD_ANSWER_GRACE_MS = 2_000;

/**
 * The counts of a direction's uploads, each one's bytes placed in the time they arrived (evenly
 * between its start, its quarters and its end): counted up to the time every stream has
 * answered for (each stream's uploads follow one another, so a stream has told all it moved up
 * to its last answer; one whose upload is still running may hold bytes from before another's),
 * except one that has stalled (STALLED_MS). Counted at each of those times, read linearly between, as bytesAt reads any counts. An upload
 * counted only when its answer came, as one lump, put a burst's bytes in the seconds after it and
 * smeared the bend a shaper makes; one spread evenly over a second made four streams trading
 * shares of a steady 19 Mbit/s read 17 to 22 from quarter second to quarter second.
 */
export function receivedProgress(received: readonly Received[]): ByteCount[] {
  const lastEnd = new Map<number, number>();
  for (const r of received) lastEnd.set(r.stream, Math.max(lastEnd.get(r.stream) ?? 0, r.endMs));
  const newest = Math.max(...lastEnd.values());
  const horizon = Math.min(...[...lastEnd.values()].filter((end) => end >= newest - STALLED_MS));
  if (!Number.isFinite(horizon) || horizon <= 0) return [];
  const times = [...new Set(received.flatMap((r) => [r.startMs, ...(r.quarters ?? []), r.endMs]).filter((t) => t > 0 && t < horizon)), horizon].sort((a, b) => a - b);
  return times.map((t) => ({ atMs: t, bytes: received.reduce((sum, r) => sum + arrivedBy(r, t), 0) }));
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

/** The most parallel streams a client may ask for (`--streams`, the monitor's `streams:`): past this a browser or a home router's connection table is the limit, not the link. */
export const MAX_STREAMS = 16;

/** A download's counts are kept at most this often, ms: a count per chunk would be 100 000 a second next to the server. */
export const SAMPLE_MS = 10;
/** How often a client asks directionDone whether a direction has measured enough, ms. */
export const CHECK_MS = 50;

/** An upload stream's first body, bytes; each next one is sized by nextUploadBytes. */
export const FIRST_UPLOAD_BYTES = 256_000;
/** An upload lasts about this long at its stream's last rate: few requests and few gaps on any link (each upload waits a round trip for its answer, a third of a second on a full 300 ms queue), a count every quarter second across four streams. */
const UPLOAD_TARGET_MS = 1_000;
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
/**
 * Round trips under load are started on a schedule, one each probeGapMs, with up to this many
 * in flight at once: one whose request or answer was lost waits out TCP's retransmission timeout
 * (200 ms, doubling with each loss again), and on 5 Mbit/s with a two-frame queue one such round
 * trip held the next ones back for the whole five-second window, which then had none. Two, each
 * on a connection of its own: with four streams, the six a browser opens to an origin.
 */
export const PROBES_IN_FLIGHT = 2;

/** The time between round trips under load: 200 ms in the default test, 100 in the light one; 25 in a 5 s window on any link. */
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
/**
 * The burst's climb begins within this time of the start: a shaper gives it to a new flow. Not
 * the first second: four flows in slow start into a small queue lose packets, and a stream that
 * waits out a retransmission timeout (200 ms, then 400) holds the count back, so the lowest
 * point of the bytes above the sustained rate can come a second in.
 */
const BURST_STARTS_WITHIN_MS = 2_000;
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
  /**
   * The median round trip sent within the window (of those that did not wait for a
   * retransmission, loadedLatency), how many there were, and how many of them did wait.
   */
  loaded: { ms: number; count: number; resent: number } | undefined;
  /** The rate in each INTERVAL_MS from the start, bits per second (for charts and exports). */
  rates: number[];
}

/** Bytes counted by `t`, read linearly between the counts around it (an upload is counted as each transfer ends). */
export function bytesAt(progress: readonly ByteCount[], t: number): number {
  let before: ByteCount = { atMs: 0, bytes: 0 };
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
 * The counts cut at `endMs`, the last read there between its neighbours: what a live rate reads
 * of a direction that ended then while its uploads in flight are answered, the same counts
 * measureDirection reads of it (countedUntil), not the seconds of those uploads after the end.
 */
export function countsUntil(progress: readonly ByteCount[], endMs: number): ByteCount[] {
  const before = progress.filter((p) => p.atMs < endMs);
  return (progress.at(-1)?.atMs ?? 0) >= endMs ? [...before, { atMs: endMs, bytes: bytesAt(progress, endMs) }] : before;
}

/**
 * How far the counts reach by `nowMs`: the last count's time. An upload is counted as each of its
 * transfers ends, so the time after the last end holds bytes not yet counted, not a slower link.
 */
function countedUntil(progress: readonly ByteCount[], nowMs: number): number {
  // Counts known past `nowMs` (uploads answered after the direction ended) count up to it.
  if ((progress.at(-1)?.atMs ?? 0) >= nowMs) return nowMs;
  let last = 0;
  for (const p of progress) if (p.atMs <= nowMs) last = Math.max(last, p.atMs);
  return last;
}

/** The rate in each whole interval up to `untilMs`, bits per second (one pass over the counts). */
function intervalRates(progress: readonly ByteCount[], untilMs: number): number[] {
  const rates: number[] = [];
  let previous = 0;
  let k = 0;
  let before: ByteCount = { atMs: 0, bytes: 0 };
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
function steadyFrom(rates: readonly number[], spread = STEADY_SPREAD): number | undefined {
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
    if (lo <= 0 || hi > lo * (1 + spread)) break;
    low = lo;
    high = hi;
    first = i;
  }
  // An average over intervals first..first+3 is in the stretch: the stretch starts with its intervals.
  return first === undefined || first === last ? undefined : first;
}

/**
 * Ending a direction early asks more: every one-second average within this share of the smallest.
 * A rate still creeping up (four CUBIC flows converging on a 200 Mbit/s link with a 5 ms queue
 * took seconds, 176 Mbit/s at 6 s against 188 later) stays within STEADY_SPREAD for five seconds
 * and would end the direction before the link is full; one that has not settled to this runs on,
 * to the profile's bound at most.
 */
const DONE_SPREAD = 0.05;

/** The span of steady rate that ends at `nowMs`, ms (0 when the rate is not steady), by DONE_SPREAD. */
export function steadyMs(progress: readonly ByteCount[], nowMs: number): number {
  const rates = intervalRates(progress, countedUntil(progress, nowMs));
  const from = steadyFrom(rates, DONE_SPREAD);
  return from === undefined ? 0 : (rates.length - from) * INTERVAL_MS;
}

/**
 * Whether the round trips of the last window have stopped growing: the median of its second half
 * at most a tenth (and 2 ms) over its first half's. A queue goes on filling after the rate is
 * steady (a loss-based sender backs off after slow start and its window regrows for seconds;
 * at 20 Mbit/s with a 300 ms queue the loaded latency read 165 ms in the first steady seconds and
 * 260 in the next ones), and the latency under load is the full queue's. Fewer than three round
 * trips a half say nothing either way: the rate's rule decides alone.
 */
function latencySettled(roundTrips: readonly RoundTrip[], nowMs: number, windowMs: number): boolean {
  const middle = nowMs - windowMs / 2;
  const early = roundTrips.filter((r) => r.atMs >= nowMs - windowMs && r.atMs < middle).map((r) => r.ms);
  const late = roundTrips.filter((r) => r.atMs >= middle).map((r) => r.ms);
  if (early.length < 3 || late.length < 3) return true;
  return (percentile(late, 0.5) ?? 0) <= (percentile(early, 0.5) ?? 0) * 1.1 + 2;
}

/**
 * Whether a direction has measured enough: its rate steady for a window's length and the round
 * trips through that window no longer growing, or out of time.
 */
export function directionDone(progress: readonly ByteCount[], roundTrips: readonly RoundTrip[], nowMs: number, profile: LoadProfile): boolean {
  if (nowMs >= profile.maxMs) return true;
  return steadyMs(progress, nowMs) >= profile.windowMs && latencySettled(roundTrips, countedUntil(progress, nowMs), profile.windowMs);
}

/**
 * The burst before the window, if the link gave one, read from the bytes above the sustained
 * rate: the excess `moved − sustained × time` falls while the load ramps up, climbs while a
 * shaper's bucket lets it run faster, and stays level once the link gives the sustained rate. Its
 * climb from the lowest point (within the first two seconds) to the highest before the window is the
 * burst: it must last a second or more, run at least a quarter above the sustained rate on
 * average and carry a megabyte or more above it; its peak is its fastest one-second average. Read
 * from the counts as a whole, not from single intervals, so an upload counted as each of its
 * transfers ends, and one slow or fast transfer on a noisy link, move none of it.
 */
function burstOf(rates: readonly number[], windowFrom: number, sustainedBps: number): Burst | undefined {
  // excess[i]: bytes above the sustained rate at the end of interval i - 1 (excess[0] = 0 at the start).
  const excess = [0];
  for (let i = 0; i < windowFrom; i++) excess.push((excess[i] ?? 0) + ((rates[i] ?? 0) - sustainedBps) * INTERVAL_MS / 1000 / 8);
  let top = 0;
  for (let i = 1; i < excess.length; i++) if ((excess[i] ?? 0) > (excess[top] ?? 0)) top = i;
  let low = 0;
  for (let i = 1; i < top; i++) if ((excess[i] ?? 0) < (excess[low] ?? 0)) low = i;
  const bytes = (excess[top] ?? 0) - (excess[low] ?? 0);
  const lengthMs = (top - low) * INTERVAL_MS;
  if (bytes < MIN_BURST_BYTES || lengthMs < MIN_BURST_MS || low * INTERVAL_MS > BURST_STARTS_WITHIN_MS) return undefined;
  // Bytes over time across the stretch: the sustained rate plus what it carried above it.
  const averageBps = sustainedBps + (bytes * 8 * 1000) / lengthMs;
  if (averageBps < MIN_PEAK_RATIO * sustainedBps) return undefined;
  // It never comes back: the window is steady (its one-second averages within a tenth of each
  // other), so none of them reaches a stretch a quarter above its rate.
  const peakBps = Math.max(averageBps, ...movingAverages(rates.slice(low, top)));
  return { peakBps, bytes: Math.round(bytes), durationMs: top * INTERVAL_MS };
}

/**
 * How much a direction's own rate moved while its figure was measured: the lowest and highest
 * one-second average (the steady rule's measure) within its window, bits per second. Undefined
 * when nothing was counted or the window is shorter than a second.
 */
export function windowSpread(measure: DirectionMeasure): { lowBps: number; highBps: number } | undefined {
  const s = measure.sustained;
  if (s === undefined) return undefined;
  const averages = movingAverages(measure.rates.slice(Math.round(s.startMs / INTERVAL_MS), Math.round(s.endMs / INTERVAL_MS)));
  if (averages.length === 0) return undefined;
  return { lowBps: Math.min(...averages), highBps: Math.max(...averages) };
}

/**
 * What a round trip waits at least when its request or answer was lost and TCP sends it again:
 * the minimum retransmission timeout (200 ms in Linux, RFC 6298 §2.4 allows 1 s; a tail-loss
 * probe for a lone segment waits the same), a little less for timer slack.
 */
const RESENT_MS = 190;

/**
 * The loaded latency of a window's round trips: their median, leaving out those that waited for
 * a retransmission (at least RESENT_MS over the quickest quarter). A queue that drops a request
 * (a 5 ms queue at 20 Mbit/s holds ten frames) makes it wait 200 ms, then 400, then 800 on the
 * next loss: a third of the page's round trips did so there, its median read 217 ms where the
 * queue holds 5, and the grade read D. Lost packets are a fault of their own, not a queue
 * (ping, which sends nothing again, reads 5 ms there); they are counted, not mixed in.
 */
function loadedLatency(ms: readonly number[]): DirectionMeasure['loaded'] {
  const quick = percentile([...ms], 0.25);
  if (quick === undefined) return undefined;
  const kept = ms.filter((m) => m < quick + RESENT_MS);
  const median = percentile(kept, 0.5) ?? quick;
  return { ms: median, count: kept.length, resent: ms.length - kept.length };
}

/**
 * The rate of the window being measured while a direction runs, bits per second, up to the last
 * count (undefined before any): what a live line shows. Once the rate is settling as a
 * direction that ends early must (every one-second average within DONE_SPREAD), the measured
 * window starts there and grows to the profile's window, so the line shows that stretch as soon
 * as it is half a window long (a boosted link's burst, still in the last window's length of the
 * counts, read 21 Mbit/s there against a final 19.1); otherwise the last window's length, as
 * measureDirection reads a rate that never settled (over loopback the stretch read 6% over the
 * final figure, the last window's length 0 to 4% under). Before a whole
 * interval has been counted, the bytes since the start over that time.
 */
export function liveBps(progress: readonly ByteCount[], profile: LoadProfile): number | undefined {
  const last = progress.at(-1);
  if (last === undefined || last.atMs <= 0) return undefined;
  if (last.atMs < INTERVAL_MS) return (last.bytes * 8 * 1000) / last.atMs;
  const rates = intervalRates(progress, last.atMs);
  const from = steadyFrom(rates, DONE_SPREAD);
  const stretchMs = from === undefined ? 0 : (rates.length - from) * INTERVAL_MS;
  if (from === undefined || stretchMs >= profile.windowMs || stretchMs < profile.windowMs / 2) return measureDirection(progress, [], last.atMs, profile).sustained?.bps;
  const end = rates.length * INTERVAL_MS;
  return ((bytesAt(progress, end) - bytesAt(progress, from * INTERVAL_MS)) * 8 * 1000) / (end - from * INTERVAL_MS);
}

/**
 * A direction's figures from what it counted until `endMs`: the sustained rate over the last
 * window's length of the steady stretch at the end (else over the last window whatever it held), bytes over time by the clock across every stream; the burst before
 * it, if any; and the median round trip of those sent within the window.
 */
export function measureDirection(progress: readonly ByteCount[], roundTrips: readonly RoundTrip[], endMs: number, profile: LoadProfile): DirectionMeasure {
  const rates = intervalRates(progress, countedUntil(progress, endMs));
  const wholeEnd = rates.length * INTERVAL_MS;
  const total = bytesAt(progress, wholeEnd);
  if (rates.length === 0 || total <= 0) return { sustained: undefined, burst: undefined, loaded: undefined, rates };
  const rateFrom = (first: number) => ((total - bytesAt(progress, first * INTERVAL_MS)) * 8 * 1000) / (wholeEnd - first * INTERVAL_MS);
  const from = steadyFrom(rates);
  const steadyLength = from === undefined ? 0 : (rates.length - from) * INTERVAL_MS;
  let windowFrom: number;
  let steady: boolean;
  let burst: Burst | undefined;
  if (from !== undefined && steadyLength >= profile.windowMs) {
    // Steady for a whole window, as directionDone ends a direction: the last window's length of
    // the steady stretch, where the queue is as full as the load keeps it (latencySettled).
    windowFrom = Math.max(from, rates.length - Math.round(profile.windowMs / INTERVAL_MS));
    steady = true;
    burst = burstOf(rates, from, rateFrom(from));
  } else {
    // Out of time: the last window's length of what was counted, whatever it held (a direction
    // runs twice its window at most, so the start's ramp stays out of it), so a rate that never
    // settles still rests on a whole window. No burst is named from a rate that never settled:
    // over loopback on a busy machine the rate swings by a third for seconds at a time, and a
    // burst read from a shorter steady stretch there named one that was not.
    windowFrom = Math.max(0, rates.length - Math.round(profile.windowMs / INTERVAL_MS));
    steady = false;
    burst = undefined;
  }
  const startMs = windowFrom * INTERVAL_MS;
  const bytes = total - bytesAt(progress, startMs);
  const bps = rateFrom(windowFrom);
  const sustained: Sustained = { bps, startMs, endMs: wholeEnd, bytes, steady };
  const loaded = loadedLatency(roundTrips.filter((r) => r.atMs >= startMs && r.atMs <= wholeEnd).map((r) => r.ms));
  return { sustained, burst, loaded, rates };
}
