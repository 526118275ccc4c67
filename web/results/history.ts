// The person's own past results, kept in their browser's storage for this site and nowhere else:
// the server stores no result (its promise), so a history can only live with the person. Each
// result is kept in the share-link codec (src/common/speedtest/share.ts) without the address: compact,
// already bounded and validated on the way back in, and read the same way a shared link is. No
// DOM here, so the rules are unit-tested on their own (test/page/history.test.ts).
import { decodeResult, encodeResult, type SharedResult } from '../../src/common/speedtest/share.js';
import { parseHistoryFile } from '../../src/common/speedtest/history-file.js';
import { checkWatches, type WatchSummary } from '../latency/watch-history.js';
import { readStored, type HistoryStorage } from './browser-storage.js';

export type { HistoryStorage } from './browser-storage.js';

export const HISTORY_KEY = 'netdiag.history';
/** The most results kept: the oldest go first past it (about 60 bytes each). */
export const HISTORY_MAX = 1000;
const VERSION = 1;

export type Read = { ok: true; results: SharedResult[] } | { ok: false; reason: string };

/** The kept results, oldest first; a stored value that cannot be read says why (and is left alone). */
export function readHistory(storage: HistoryStorage): Read {
  const read = readStored(storage, HISTORY_KEY, 'what is stored is not JSON');
  if (!read.ok) return read;
  if (read.value === null) return { ok: true, results: [] };
  const stored = read.value as { v?: unknown; results?: unknown };
  if (stored.v !== VERSION || !Array.isArray(stored.results)) return { ok: false, reason: `what is stored is not a version ${String(VERSION)} history (a newer netdiag may have written it)` };
  const results: SharedResult[] = [];
  for (const [i, item] of (stored.results as unknown[]).entries()) {
    const decoded = typeof item === 'string' ? decodeResult(item) : { ok: false as const, reason: 'it is not a string' };
    if (!decoded.ok) return { ok: false, reason: `result ${String(i + 1)} cannot be read: ${decoded.reason}` };
    results.push(decoded.result);
  }
  return { ok: true, results };
}

/** Stores `results` (oldest first, the newest HISTORY_MAX), without any address. */
export function writeHistory(storage: HistoryStorage, results: readonly SharedResult[]): void {
  const kept = sortByTime(results).slice(-HISTORY_MAX);
  storage.setItem(HISTORY_KEY, JSON.stringify({ v: VERSION, results: kept.map((r) => encodeResult(withoutAddress(r))) }));
}

function withoutAddress(result: SharedResult): SharedResult {
  const copy = { ...result };
  delete copy.address;
  return copy;
}

const sortByTime = (results: readonly SharedResult[]) => [...results].sort((a, b) => a.at - b.at);

/**
 * What tells one kept result from another: all it keeps (the share form without the address). Two
 * tests in the same second (their time is kept to the second) differ in their figures; the same
 * file imported twice adds nothing.
 */
export const resultKey = (r: SharedResult): string => encodeResult(withoutAddress(r));

/** `existing` and `incoming` together, each result once, oldest first. */
export function mergeHistory(existing: readonly SharedResult[], incoming: readonly SharedResult[]): SharedResult[] {
  const byKey = new Map<string, SharedResult>();
  for (const r of [...existing, ...incoming]) byKey.set(resultKey(r), withoutAddress(r));
  return sortByTime([...byKey.values()]);
}

/**
 * A history file this page exported (JSON or CSV), read back: its results as the shared file
 * format reads them, its watch summaries checked as the stored ones are.
 */
export function parseHistory(text: string): Parsed {
  const file = parseHistoryFile(text);
  if (!file.ok) return file;
  const checked = checkWatches(file.watches, 'watch');
  return checked.ok ? { ok: true, results: file.results, watches: checked.watches } : { ok: false, reason: checked.reason };
}

export type Parsed = { ok: true; results: SharedResult[]; watches: WatchSummary[] } | { ok: false; reason: string };
