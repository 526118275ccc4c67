// A watch's summary, kept in the browser's history when the person asks for it (the watch's own
// polls stay in the tab, as before): when it ran, how often it polled, for how long, and per
// target its median, p95 and jitter and how many polls failed or were refused. Stored beside the
// speed-test results (web/results/history.ts), in its own key, as plain JSON checked on the way back in.
// No DOM here (test/page/history.test.ts).
import { readStored, type HistoryStorage } from '../results/browser-storage.js';

export const WATCH_HISTORY_KEY = 'netdiag.watch-history';
/** The most summaries kept: the oldest go first past it. */
export const WATCH_HISTORY_MAX = 200;
const VERSION = 1;
/** Bounds a summary must keep to be read back: a day of polling, at most 20 targets, an hour per round trip. */
const MAX = { seconds: 86_400 * 7, targets: 20, label: 80, ms: 3_600_000, polls: 1_000_000 } as const;

export interface WatchTargetSummary {
  /** What the page called it: "you → this server", "this server → Western Europe". */
  label: string;
  polls: number;
  failed: number;
  limited: number;
  median_ms: number | null;
  p95_ms: number | null;
  jitter_ms: number | null;
}

export interface WatchSummary {
  /** When the watch started, ms since the epoch. */
  at: number;
  interval_s: number;
  duration_s: number;
  targets: WatchTargetSummary[];
}

type ReadWatches = { ok: true; watches: WatchSummary[] } | { ok: false; reason: string };

const count = (v: unknown, max: number) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= max;
const msOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX.ms);

/** A summary as read back (stored or imported), or what is wrong with it. */
function checkWatch(item: unknown): WatchSummary | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'it is not an object';
  const w = item as Record<string, unknown>;
  if (typeof w.at !== 'number' || !Number.isFinite(w.at) || w.at < 0) return 'its at is not a time';
  if (!count(w.interval_s, 3600) || w.interval_s === 0) return 'its interval_s is not a whole number of seconds from 1';
  if (!count(w.duration_s, MAX.seconds)) return 'its duration_s is not a whole number of seconds';
  if (!Array.isArray(w.targets) || w.targets.length === 0 || w.targets.length > MAX.targets) return `its targets are not a list of 1 to ${String(MAX.targets)}`;
  const targets: WatchTargetSummary[] = [];
  for (const [i, t] of (w.targets as unknown[]).entries()) {
    const name = `target ${String(i + 1)}`;
    if (typeof t !== 'object' || t === null) return `${name} is not an object`;
    const r = t as Record<string, unknown>;
    // Shown as text only (textContent), but bounded and free of control characters all the same.
    // eslint-disable-next-line no-control-regex -- the point is to refuse them
    if (typeof r.label !== 'string' || r.label.length === 0 || r.label.length > MAX.label || /[\u0000-\u001f\u007f-\u009f]/.test(r.label)) return `${name}'s label is not a short line of text`;
    for (const key of ['polls', 'failed', 'limited'] as const) if (!count(r[key], MAX.polls)) return `${name}'s ${key} is not a count`;
    for (const key of ['median_ms', 'p95_ms', 'jitter_ms'] as const) if (!msOrNull(r[key])) return `${name}'s ${key} is not a round trip in ms or null`;
    targets.push({ label: r.label, polls: r.polls as number, failed: r.failed as number, limited: r.limited as number, median_ms: r.median_ms as number | null, p95_ms: r.p95_ms as number | null, jitter_ms: r.jitter_ms as number | null });
  }
  return { at: w.at, interval_s: w.interval_s as number, duration_s: w.duration_s as number, targets };
}

/** The kept summaries, oldest first; stored data that cannot be read says why (and is left alone). */
export function readWatches(storage: HistoryStorage): ReadWatches {
  const read = readStored(storage, WATCH_HISTORY_KEY, 'the watch summaries stored are not JSON');
  if (!read.ok) return read;
  if (read.value === null) return { ok: true, watches: [] };
  const stored = read.value as { v?: unknown; watches?: unknown };
  if (stored.v !== VERSION || !Array.isArray(stored.watches)) return { ok: false, reason: `the watch summaries stored are not version ${String(VERSION)} (a newer netdiag may have written them)` };
  return checkWatches(stored.watches as unknown[], 'watch summary');
}

/** Each summary checked; one that is wrong refuses them all, naming it. */
export function checkWatches(items: readonly unknown[], what: string): ReadWatches {
  const watches: WatchSummary[] = [];
  for (const [i, item] of items.entries()) {
    const checked = checkWatch(item);
    if (typeof checked === 'string') return { ok: false, reason: `${what} ${String(i + 1)}: ${checked}` };
    watches.push(checked);
  }
  return { ok: true, watches };
}

/** `existing` and `incoming` together, one per start time, oldest first, the newest WATCH_HISTORY_MAX. */
export function mergeWatches(existing: readonly WatchSummary[], incoming: readonly WatchSummary[]): WatchSummary[] {
  const byStart = new Map<number, WatchSummary>();
  for (const w of [...existing, ...incoming]) byStart.set(w.at, w);
  return [...byStart.values()].sort((a, b) => a.at - b.at).slice(-WATCH_HISTORY_MAX);
}

export function writeWatches(storage: HistoryStorage, watches: readonly WatchSummary[]): void {
  storage.setItem(WATCH_HISTORY_KEY, JSON.stringify({ v: VERSION, watches: mergeWatches([], watches) }));
}
