// The person's own past results, kept in their browser's storage for this site and nowhere else:
// the server stores no result (its promise), so a history can only live with the person. Each
// result is kept in the share-link codec (src/common/speedtest/share.ts) without the address: compact,
// already bounded and validated on the way back in, and read the same way a shared link is. No
// DOM here, so the rules are unit-tested on their own (test/page-history.test.ts).
import { decodeResult, encodeResult, type SharedResult } from '../src/common/speedtest/share.js';
import { bufferbloat } from '../src/common/speedtest/bufferbloat.js';
import { worseLoaded } from './report.js';
import { checkWatches, type WatchSummary } from './watch-history.js';
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

/** The figures of a kept result as its export names them, units in the names. */
function row(r: SharedResult) {
  const loaded = worseLoaded(r.loadedDownMs, r.loadedUpMs);
  return {
    tested_at: new Date(r.at).toISOString(),
    mode: r.mode,
    download_mbps: r.downloadBps === undefined ? null : r.downloadBps / 1e6,
    upload_mbps: r.uploadBps === undefined ? null : r.uploadBps / 1e6,
    latency_ms: r.latencyMs ?? null,
    jitter_ms: r.jitterMs ?? null,
    loaded_latency_down_ms: r.loadedDownMs ?? null,
    loaded_latency_up_ms: r.loadedUpMs ?? null,
    packet_loss_percent: r.lossPercent ?? null,
    // Derived (from idle and loaded latency), for a reader's convenience; import ignores it.
    bufferbloat_grade: bufferbloat(r.latencyMs, loaded)?.grade ?? null,
  };
}

type Row = ReturnType<typeof row>;
const COLUMNS = Object.keys(row({ at: 0, mode: 'full' })) as (keyof Row)[];

/** The history as JSON: the results by name with their units, and the watch summaries kept. */
export function historyJson(results: readonly SharedResult[], watches: readonly WatchSummary[] = []): string {
  return `${JSON.stringify({ netdiag_history: VERSION, results: results.map(row), watches }, null, 2)}\n`;
}

export function historyCsv(results: readonly SharedResult[]): string {
  const lines = [COLUMNS.join(','), ...results.map((r) => COLUMNS.map((c) => String(row(r)[c] ?? '')).join(','))];
  return `${lines.join('\n')}\n`;
}

export type Parsed = { ok: true; results: SharedResult[]; watches: WatchSummary[] } | { ok: false; reason: string };

/**
 * A history file this page exported (JSON or CSV), read back. Every result is checked as a shared
 * link is (share.ts's bounds): one that is wrong refuses the file, naming it, rather than
 * importing the rest silently.
 */
export function parseHistory(text: string): Parsed {
  const trimmed = text.trim();
  let rows: unknown[];
  let watches: WatchSummary[] = [];
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      return { ok: false, reason: `it is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
    }
    const file = parsed as { netdiag_history?: unknown; results?: unknown; watches?: unknown };
    if (file.netdiag_history !== VERSION || !Array.isArray(file.results)) return { ok: false, reason: `it is not a netdiag history (version ${String(VERSION)})` };
    rows = file.results as unknown[];
    // The watch summaries, when the file has them (a CSV has only the results).
    if (file.watches !== undefined) {
      if (!Array.isArray(file.watches)) return { ok: false, reason: 'its watches are not a list' };
      const checked = checkWatches(file.watches as unknown[], 'watch');
      if (!checked.ok) return { ok: false, reason: checked.reason };
      watches = checked.watches;
    }
  } else {
    const [header = '', ...lines] = trimmed.split(/\r?\n/);
    const names = header.split(',');
    if (names[0] !== 'tested_at' || !names.includes('download_mbps')) return { ok: false, reason: 'it is neither a netdiag history in JSON nor one in CSV (its first line names no tested_at and download_mbps)' };
    rows = lines.filter((l) => l !== '').map((line) => Object.fromEntries(line.split(',').map((cell, i) => [names[i] ?? `column ${String(i + 1)}`, cell === '' ? null : cell])));
  }
  const results: SharedResult[] = [];
  for (const [i, r] of rows.entries()) {
    const result = fromRow(r);
    if (typeof result === 'string') return { ok: false, reason: `result ${String(i + 1)}: ${result}` };
    results.push(result);
  }
  return { ok: true, results, watches };
}

/** One exported row as a result, or what is wrong with it. */
function fromRow(item: unknown): SharedResult | string {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return 'it is not an object';
  const r = item as Record<string, unknown>;
  const at = typeof r.tested_at === 'string' ? Date.parse(r.tested_at) : NaN;
  if (Number.isNaN(at)) return 'its tested_at is not a time';
  if (r.mode !== 'light' && r.mode !== 'full') return 'its mode is neither light nor full';
  const result: SharedResult = { at, mode: r.mode };
  const fields: [keyof Row, keyof SharedResult, number][] = [
    ['download_mbps', 'downloadBps', 1e6],
    ['upload_mbps', 'uploadBps', 1e6],
    ['latency_ms', 'latencyMs', 1],
    ['jitter_ms', 'jitterMs', 1],
    ['loaded_latency_down_ms', 'loadedDownMs', 1],
    ['loaded_latency_up_ms', 'loadedUpMs', 1],
    ['packet_loss_percent', 'lossPercent', 1],
  ];
  for (const [name, key, scale] of fields) {
    const value = r[name];
    if (value === null || value === undefined) continue;
    const number = typeof value === 'number' ? value : typeof value === 'string' && /^[0-9.eE+-]+$/.test(value) ? Number(value) : NaN;
    if (!Number.isFinite(number) || number < 0) return `its ${name} is not a number of zero or more`;
    (result as unknown as Record<string, number>)[key] = number * scale;
  }
  // Through the share codec and back: the same bounds and precision as a link or the stored history.
  const checked = decodeResult(encodeResult(result));
  return checked.ok ? checked.result : checked.reason;
}
