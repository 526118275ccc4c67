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
/**
 * Load-generating connections: one at the start and one more each interval up to this many (INP,
 * INC, MNP), as goresponsiveness adds them whatever the goodput does: a self probe waits behind
 * its connection's share of the queue, so a client that stopped at fewer would read another figure.
 */
export const MAX_CONNECTIONS = 16;
/** A direction ends at this bound whatever the figures did, ms (the draft leaves it to the client; goresponsiveness uses 20 s). */
export const MAX_DIRECTION_MS = 20_000;
/**
 * A probe round (a probe on a new connection, then one on a load-generating connection, as
 * goresponsiveness sends them) starts this often, ms: 20 rounds a second, under the draft's 100
 * probes a second (MPS) and, over a whole test, within a deployment's `rpm` limit (6000 a minute).
 */
export const ROUND_GAP_MS = 50;
/**
 * The trimmed mean keeps this share of the samples, the fastest (the draft's TMP, 95%: a
 * single-sided trim of the slowest 5%). goresponsiveness's `-rpm.tmp` is this share in percent,
 * 5 by default, so by default it averages the fastest 5% (docs/design.md, "Responsiveness").
 */
const KEPT = 0.95;

/**
 * One interval's probe times, ms: each new connection's whole probe (`foreign`: from the TCP
 * connection's start to the small object's last byte) and its parts (TCP handshake, TLS
 * handshake, the HTTP exchange), and each loaded connection's HTTP exchange (`self`).
 */
export interface ProbeTimes {
  foreign: number[];
  tcp: number[];
  tls: number[];
  http: number[];
  self: number[];
}

const PROBE_KINDS = ['foreign', 'tcp', 'tls', 'http', 'self'] as const;

export const noProbes = (): ProbeTimes => ({ foreign: [], tcp: [], tls: [], http: [], self: [] });

/** All of several intervals' probe times together. */
export function joinProbes(sets: readonly ProbeTimes[]): ProbeTimes {
  const all = noProbes();
  for (const s of sets) for (const key of PROBE_KINDS) all[key].push(...s[key]);
  return all;
}

/** The mean of the fastest KEPT of the values (the draft's TM). */
export function trimmedMean(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  // The slowest 5% rounded down are left out: under twenty samples, none.
  const kept = sorted.slice(0, Math.ceil(sorted.length * KEPT));
  return kept.reduce((sum, v) => sum + v, 0) / kept.length;
}

/** The 90th percentile, for the figure `rpm_p90` gives beside the trimmed mean (as goresponsiveness reports both). */
export const p90 = (values: readonly number[]): number | undefined => percentile([...values], 0.9);

/**
 * The round trip each kind of probe stands for, ms, by `statistic`: a new connection's whole
 * probe counts three round trips (TCP, TLS, HTTP) and stands for their mean (the draft's
 * 1/3·(TM(tcp_f) + TM(tls_f) + TM(http_f)), taken whole as goresponsiveness does, so a slow
 * handshake is not trimmed apart from the rest of its probe); a loaded connection's is one.
 */
export function probeRoundTrips(times: ProbeTimes, statistic: (values: readonly number[]) => number | undefined = trimmedMean): { foreign: number | undefined; self: number | undefined } {
  const whole = statistic(times.foreign);
  return { foreign: whole === undefined ? undefined : whole / 3, self: statistic(times.self) };
}

/**
 * Responsiveness in RPM from probe times by `statistic` (the draft's formula):
 * 60 000 / (1/2·foreign + 1/2·self), the two kinds' round trips averaged before the minute is
 * divided by them. With only one kind answered, that kind's; with none, undefined.
 */
export function responsiveness(times: ProbeTimes, statistic?: (values: readonly number[]) => number | undefined): number | undefined {
  const { foreign, self } = probeRoundTrips(times, statistic);
  const known = [foreign, self].filter((v): v is number => v !== undefined);
  if (known.length === 0) return undefined;
  const mean = known.reduce((a, b) => a + b, 0) / known.length;
  return mean > 0 ? 60_000 / mean : undefined;
}

/** Each probe kind's trimmed mean, ms: what a figure is made of, so a disagreement can be traced. */
export interface ProbeComponents {
  /** A new connection's probe per round trip (its whole time over three). */
  foreignMs: number | undefined;
  tcpMs: number | undefined;
  tlsMs: number | undefined;
  httpMs: number | undefined;
  selfMs: number | undefined;
}

export function probeComponents(times: ProbeTimes): ProbeComponents {
  const { foreign, self } = probeRoundTrips(times);
  return { foreignMs: foreign, tcpMs: trimmedMean(times.tcp), tlsMs: trimmedMean(times.tls), httpMs: trimmedMean(times.http), selfMs: self };
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
 * under SDT of the newest. `series` is what is computed each interval: for goodput the moving
 * average of the interval rates (the draft's), for responsiveness the interval's mean round time,
 * a round's two probes together (goresponsiveness's).
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
