// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// A watch's polls and what they add up to, for the page's watch and `netdiag watch` alike: the
// table's last, min, median, p95, jitter and failures, the chart's buckets, and whether a choice
// of regions and interval fits the probe limit. A 429 is "limited": the service said no to the
// rate, which says nothing of the path, so it is never counted as loss.
import { jitterOf, percentile } from './statistics.js';

export type PollStatus = 'ok' | 'failed' | 'limited';

/** The target that is the watcher's own round trip to the deployment, beside the regions. */
export const SERVER_TARGET = 'server';

/** The `probe` operation's limit per source and minute unless the operator changed it (the API contract). */
export const DEFAULT_PROBE_LIMIT = 30;

/** One poll of one target: when it was sent (ms since the epoch), its round trip, how it ended. */
export interface Poll {
  at: number;
  target: string;
  rtt_ms: number | null;
  status: PollStatus;
}

export interface SeriesSummary {
  polls: number;
  ok: number;
  failed: number;
  limited: number;
  /** Failed polls as a share of those that were answered or failed (limited ones are neither); null before any. */
  lossPercent: number | null;
  last: number | null;
  min: number | null;
  median: number | null;
  p95: number | null;
  max: number | null;
  /** Mean absolute difference of consecutive round trips; null under two. */
  jitter: number | null;
}

export function summarize(polls: readonly Poll[]): SeriesSummary {
  const rtts = polls.flatMap((p) => (p.status === 'ok' && p.rtt_ms !== null ? [p.rtt_ms] : []));
  const count = (status: PollStatus) => polls.filter((p) => p.status === status).length;
  const ok = count('ok');
  const failed = count('failed');
  return {
    polls: polls.length,
    ok,
    failed,
    limited: count('limited'),
    lossPercent: ok + failed === 0 ? null : (100 * failed) / (ok + failed),
    last: rtts.at(-1) ?? null,
    min: rtts.length === 0 ? null : Math.min(...rtts),
    median: percentile(rtts, 0.5) ?? null,
    p95: percentile(rtts, 0.95) ?? null,
    max: rtts.length === 0 ? null : Math.max(...rtts),
    jitter: jitterOf(rtts) ?? null,
  };
}

/** One bucket of the SmokePing-like chart: the median line, the min-max band, failures marked. */
interface Bucket {
  from: number;
  to: number;
  min: number | null;
  median: number | null;
  max: number | null;
  failed: number;
  limited: number;
}

/** The polls cut into `count` equal spans of time from the first to the last; empty spans stay empty. */
export function buckets(polls: readonly Poll[], count: number): Bucket[] {
  if (polls.length === 0 || count < 1) return [];
  const first = Math.min(...polls.map((p) => p.at));
  const last = Math.max(...polls.map((p) => p.at));
  const width = Math.max(1, (last - first) / count);
  const spans = Array.from({ length: count }, (_, i) => ({ from: first + i * width, to: first + (i + 1) * width, polls: [] as Poll[] }));
  for (const poll of polls) spans[Math.min(count - 1, Math.floor((poll.at - first) / width))]?.polls.push(poll);
  return spans.map(({ from, to, polls: inside }) => {
    const s = summarize(inside);
    return { from, to, min: s.min, median: s.median, max: s.max, failed: s.failed, limited: s.limited };
  });
}

/**
 * Probe requests a minute that polling `regions` every `intervalSeconds` makes, whether they fit
 * `limitPerMinute` (the `probe` operation's limit per source), and the shortest interval that would.
 */
export function probeBudget(regions: number, intervalSeconds: number, limitPerMinute: number): { perMinute: number; fits: boolean; leastSeconds: number } {
  const perMinute = regions * (60 / intervalSeconds);
  return { perMinute, fits: perMinute <= limitPerMinute, leastSeconds: Math.ceil((regions * 60) / limitPerMinute) };
}
