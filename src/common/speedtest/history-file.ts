// The history file the page exports and imports ("Your history": Export JSON, Export CSV, Import)
// and `netdiag monitor export` and `import` write and read, so a person moves their results
// between the browser and the monitor: version 1, each result's figures by name with their units,
// as JSON (`{netdiag_history: 1, results: [...], watches: [...]}`) or CSV (a header naming the
// columns, then a row per result). The server a result was measured against, its streams and its
// family are written when it has them (columns `server`, `streams`, `family`, after the figures). Every result read back is checked as a shared link is
// (share.ts's bounds), and one that is wrong refuses the file, naming it, rather than importing
// the rest silently. No DOM and no Node here: the page and the command line both use it.
import { figuresOfShared } from './report.js';
import { decodeResult, encodeResult, type SharedResult } from './share.js';

const VERSION = 1;

/** The figures of a result as the file names them, units in the names. */
function row(r: SharedResult) {
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
    bufferbloat_grade: figuresOfShared(r).bufferbloat_grade,
  };
}

/** What the test was measured against and with, when the result says it. */
const setupOf = (r: SharedResult): Partial<Record<SetupColumn, string | number>> => ({
  ...(r.server === undefined ? {} : { server: r.server }),
  ...(r.streams === undefined ? {} : { streams: r.streams }),
  ...(r.family === undefined ? {} : { family: r.family }),
});

type Row = ReturnType<typeof row>;
type SetupColumn = 'server' | 'streams' | 'family';
const COLUMNS = Object.keys(row({ at: 0, mode: 'full' })) as (keyof Row)[];
const SETUP_COLUMNS: readonly SetupColumn[] = ['server', 'streams', 'family'];

/** The file as JSON: the results by name with their units, and the page's watch summaries (the monitor has none). */
export function historyFileJson(results: readonly SharedResult[], watches: readonly unknown[] = []): string {
  return `${JSON.stringify({ netdiag_history: VERSION, results: results.map((r) => ({ ...row(r), ...setupOf(r) })), watches }, null, 2)}\n`;
}

/** The file as CSV: the results only; a setup column only when a result has it. */
export function historyFileCsv(results: readonly SharedResult[]): string {
  const setup = SETUP_COLUMNS.filter((c) => results.some((r) => setupOf(r)[c] !== undefined));
  const cells = (r: SharedResult) => [...COLUMNS.map((c) => row(r)[c]), ...setup.map((c) => setupOf(r)[c])].map((v) => String(v ?? ''));
  const lines = [[...COLUMNS, ...setup].join(','), ...results.map((r) => cells(r).join(','))];
  return `${lines.join('\n')}\n`;
}

/** A file read back: its results, and its watch summaries as they are (the page checks them; a CSV has none). */
type ParsedFile = { ok: true; results: SharedResult[]; watches: unknown[] } | { ok: false; reason: string };

/** A history file (JSON or CSV) read back, or what is wrong with it. */
export function parseHistoryFile(text: string): ParsedFile {
  const trimmed = text.trim();
  let rows: unknown[];
  let watches: unknown[] = [];
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
    if (file.watches !== undefined) {
      if (!Array.isArray(file.watches)) return { ok: false, reason: 'its watches are not a list' };
      watches = file.watches as unknown[];
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

/** One row as a result, or what is wrong with it. */
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
  if (r.server !== null && r.server !== undefined) {
    if (typeof r.server !== 'string') return 'its server is not a name';
    result.server = r.server;
  }
  if (r.streams !== null && r.streams !== undefined) {
    const streams = typeof r.streams === 'number' ? r.streams : typeof r.streams === 'string' && /^[0-9]+$/.test(r.streams) ? Number(r.streams) : NaN;
    if (!Number.isInteger(streams)) return 'its streams is not a whole number';
    result.streams = streams;
  }
  if (r.family !== null && r.family !== undefined) {
    if (r.family !== 'ipv4' && r.family !== 'ipv6') return 'its family is neither ipv4 nor ipv6';
    result.family = r.family;
  }
  // Through the share codec and back: the same bounds and precision as a link or the stored history.
  const checked = decodeResult(encodeResult(result));
  return checked.ok ? checked.result : checked.reason;
}
