// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Responsiveness under working conditions in round trips per minute (RPM), by the IETF draft
// draft-ietf-ippm-responsiveness (-09): the rules `netdiag rpm` measures by, pure so they are
// unit-tested (rpm.test.ts). The page names its figure an estimate and reads it otherwise
// (docs/design.md, "Responsiveness").

import { percentile } from '../statistics.js';

/**
 * The interval the goodput and the responsiveness are read in, ms (the draft's ID). Drafts -02
 * to -08 and the open clients (goresponsiveness, networkquality-rs) use 1 s; -09 raised the
 * default to 5 s, which with the moving average of four intervals below would need 20 s of
 * steady load before a direction could end. 1 s keeps a direction within 20 s.
 */
export const RPM_INTERVAL_MS = 1_000;
/** Intervals a moving average spans, and how many moving averages must agree (the draft's MAD). */
export const MAD = 4;
/** Agree: their standard deviation under this share of the newest one (the draft's SDT). */
const SDT = 0.05;
/** Load-generating connections: one at the start, one more each interval the goodput is not stable, at most this many (INP, INC, MNP). */
export const MAX_CONNECTIONS = 16;
/** A direction ends at this bound whatever the figures did, ms (the draft leaves it to the client; goresponsiveness uses 20 s). */
export const MAX_DIRECTION_MS = 20_000;
/**
 * A pair of probes, one on a new connection and one on a load-generating connection, starts this
 * often, ms: 10 a second, well under the draft's 100 (MPS) and its 5% of the link (PTC), and
 * within a deployment's `rpm` limit over a whole test.
 */
export const PROBE_GAP_MS = 200;
/** The trimmed mean leaves out this share of the slowest samples (the draft's TMP, 95%: "single-sided"). */
const TRIM = 0.05;

/** One interval's probe times, ms: a new connection's TCP handshake, TLS handshake (per round trip) and HTTP exchange, and a loaded connection's HTTP exchange. */
export interface ProbeTimes {
  tcp: number[];
  tls: number[];
  http: number[];
  self: number[];
}

export const noProbes = (): ProbeTimes => ({ tcp: [], tls: [], http: [], self: [] });

/** All of several intervals' probe times together. */
export function joinProbes(sets: readonly ProbeTimes[]): ProbeTimes {
  const all = noProbes();
  for (const s of sets) for (const key of ['tcp', 'tls', 'http', 'self'] as const) all[key].push(...s[key]);
  return all;
}

/** The mean of the values after the slowest TRIM of them are left out (the draft's TM). */
export function trimmedMean(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const kept = sorted.slice(0, Math.max(1, Math.ceil(sorted.length * (1 - TRIM))));
  return kept.reduce((sum, v) => sum + v, 0) / kept.length;
}

/** The 90th percentile, for the figure `rpm_p90` gives beside the trimmed mean (as goresponsiveness reports both). */
export const p90 = (values: readonly number[]): number | undefined => percentile([...values], 0.9);

/**
 * Responsiveness in RPM from probe times by `statistic` (the draft's formula since -04): the new connections'
 * RPM, 60 000 over the mean of their TCP, TLS and HTTP times (TCP and HTTP alone without TLS),
 * and the loaded connections', 60 000 over their HTTP time, averaged. With only one kind of
 * probe answered, that kind's; with none, undefined.
 */
export function responsiveness(times: ProbeTimes, statistic: (values: readonly number[]) => number | undefined = trimmedMean): number | undefined {
  const tcp = statistic(times.tcp);
  const tls = statistic(times.tls);
  const http = statistic(times.http);
  const self = statistic(times.self);
  const foreignParts = [tcp, tls, http].filter((v): v is number => v !== undefined);
  const foreign = tcp === undefined || http === undefined ? undefined : 60_000 / (foreignParts.reduce((a, b) => a + b, 0) / foreignParts.length);
  const loaded = self === undefined ? undefined : 60_000 / self;
  if (foreign !== undefined && loaded !== undefined) return (foreign + loaded) / 2;
  return foreign ?? loaded;
}

/**
 * The page's estimate (a browser can neither open a new connection for a probe nor pick a loaded
 * one, as the draft asks): 60 000 over the trimmed mean of the round trips timed beside the load,
 * on connections of their own, through the measured windows. Undefined without any.
 */
export function loadedRpmEstimate(roundTripsMs: readonly number[]): number | undefined {
  const mean = trimmedMean(roundTripsMs);
  return mean === undefined || mean <= 0 ? undefined : 60_000 / mean;
}

/** The moving averages of `values` over MAD: `out[i]` ends with `values[i + MAD - 1]`. */
export function movingAverages(values: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = MAD - 1; i < values.length; i++) out.push(values.slice(i - MAD + 1, i + 1).reduce((a, b) => a + b, 0) / MAD);
  return out;
}

/**
 * Whether a series has saturated (the draft's stability rule): the standard deviation of its last MAD values
 * under SDT of the newest. `series` is what the draft computes each interval: for goodput the
 * moving average of the interval rates, for responsiveness the figure over the last MAD intervals.
 */
export function saturated(series: readonly number[]): boolean {
  if (series.length < MAD) return false;
  const last = series.slice(-MAD);
  const newest = last.at(-1) ?? 0;
  if (newest <= 0) return false;
  const mean = last.reduce((a, b) => a + b, 0) / MAD;
  const sd = Math.sqrt(last.reduce((a, b) => a + (b - mean) ** 2, 0) / MAD);
  return sd < SDT * newest;
}

/**
 * How far a direction's figure can be trusted (the draft's confidence): low when fewer than MAD
 * intervals ran, medium when it ran that long but did not saturate, high when it did.
 */
export type Confidence = 'low' | 'medium' | 'high';
export function confidenceOf(intervals: number, stable: boolean): Confidence {
  if (intervals < MAD) return 'low';
  return stable ? 'high' : 'medium';
}

/** The lower of two confidences (a test's whole figure is as sure as its less sure direction). */
export const lowerConfidence = (a: Confidence, b: Confidence): Confidence => (['low', 'medium', 'high'].indexOf(a) <= ['low', 'medium', 'high'].indexOf(b) ? a : b);

/**
 * The draft's plain words for a figure (since -07): poor under 300 RPM (a round trip over 200 ms),
 * fair to 1000, good to 6000, excellent above (10 ms).
 */
export function rpmClass(rpm: number): 'poor' | 'fair' | 'good' | 'excellent' {
  if (rpm < 300) return 'poor';
  if (rpm < 1_000) return 'fair';
  if (rpm < 6_000) return 'good';
  return 'excellent';
}
