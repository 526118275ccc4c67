// `netdiag monitor history`, `export` and `import` (docs/monitor.md, "History" and "The page's
// history file"): the recorded runs as a table, JSON or CSV; the speed tests among them as the
// page's history file; and a page's history file taken in as runs, so a person moves between the
// browser and the monitor.
import { readFileSync } from 'node:fs';
import { csvRows } from '../../common/csv.js';
import { historyFileCsv, historyFileJson, parseHistoryFile } from '../../common/speedtest/history-file.js';
import { print, printJson, table, type Output } from '../terminal/output.js';
import { durationMs } from './monitor-config.js';
import { resultOfRun } from '../../common/speedtest/run-result.js';
import { runOfResult } from './page-history.js';
import { historyFaultExit, loadMonitorConfig, loadDatabase, log, openHistory, outcomeOf, summary } from './setup.js';
import type { RunRecord } from './store.js';

/** The --since bound in ms since the epoch (0 for none), or undefined having said what is wrong. */
function sinceOf(text: string | undefined): number | undefined {
  if (text === undefined) return 0;
  const ms = durationMs(text);
  if (ms === undefined) {
    log(`--since "${text}" is not a duration (90s, 30m, 6h, 7d)`);
    return undefined;
  }
  return Date.now() - ms;
}

/**
 * The history's file and its runs since `--since`, or the exit status having said what stopped it
 * (2 bad input, 1 the history). Only `database:` is read: a fault elsewhere in the file (a check
 * being edited) never keeps a person from the runs recorded.
 */
async function recordedRuns(configPath: string, sinceText: string | undefined): Promise<{ database: string; runs: RunRecord[] } | number> {
  const database = loadDatabase(configPath);
  if (database === undefined) return 2;
  const since = sinceOf(sinceText);
  if (since === undefined) return 2;
  const store = await openHistory(database);
  if (store === undefined) return 1;
  const runs = store.runs(since);
  store.close();
  return { database, runs };
}

/** `netdiag monitor history`: the runs recorded, oldest first, as a table, JSON lines' array or CSV. */
export async function historyCommand(configPath: string, out: Output, options: { since?: string; csv?: boolean }): Promise<number> {
  const read = await recordedRuns(configPath, options.since);
  if (typeof read === 'number') return read;
  const { database, runs } = read;
  if (out.json) {
    printJson(runs.map((r) => ({ check: r.check, server: r.server, started_at: new Date(r.startedAt).toISOString(), duration_ms: r.durationMs, outcome: outcomeOf(r), ok: r.ok, error: r.error, breaches: r.breaches, figures: r.figures, source: r.source ?? 'monitor', chosen: r.chosen ?? null, source_address: r.sourceAddress ?? null, bytes_down: r.bytesDown ?? null, bytes_up: r.bytesUp ?? null })));
    return 0;
  }
  if (options.csv === true) {
    // A server's problem text or DNS answer lands in a cell: csvCell makes none of them a formula.
    // chosen, source_address and the bytes come last: a sheet or script reading the older columns by position still reads them.
    const header = ['started_at', 'check', 'server', 'outcome', 'ok', 'error', 'breaches', 'figures', 'chosen', 'source_address', 'bytes_down', 'bytes_up'];
    process.stdout.write(csvRows([header, ...runs.map((r) => [new Date(r.startedAt).toISOString(), r.check, r.server, outcomeOf(r), String(r.ok), r.error ?? '', r.breaches.join('; '), JSON.stringify(r.figures), r.chosen ?? '', r.sourceAddress ?? '', r.bytesDown?.toString() ?? '', r.bytesUp?.toString() ?? ''])]));
    return 0;
  }
  if (runs.length === 0) {
    print(`no runs recorded in ${database}`);
    return 0;
  }
  print(table(out, [['when', 'check', 'server', 'result', 'breaches'], ...runs.map((r) => [new Date(r.startedAt).toISOString().replace('T', ' ').slice(0, 19), r.check, r.server, summary(r), String(r.breaches.length)])]));
  return 0;
}

/**
 * `netdiag monitor export`: the speed tests that ran (of one check, or all), as the page's history
 * file on standard output, JSON or CSV; how many runs were left out, and why, on standard error.
 */
export async function exportCommand(configPath: string, options: { check?: string; since?: string; csv?: boolean }): Promise<number> {
  const read = await recordedRuns(configPath, options.since);
  if (typeof read === 'number') return read;
  const runs = read.runs.filter((r) => options.check === undefined || r.check === options.check);
  const results = runs.map(resultOfRun).filter((r) => r !== undefined);
  process.stdout.write(options.csv === true ? historyFileCsv(results) : historyFileJson(results));
  const left = runs.length - results.length;
  log(`${String(results.length)} speed test${results.length === 1 ? '' : 's'} exported${left === 0 ? '' : `; ${String(left)} run${left === 1 ? '' : 's'} left out (failed, or not speed tests: the page's history holds speed tests only)`}`);
  return 0;
}

/**
 * `netdiag monitor import FILE`: a page's history file (JSON or CSV) taken in as runs of `check`
 * against `server`, in one transaction; a file with a fault is refused whole, naming it, and a
 * result already there (the same check, server and time) is not added twice.
 */
export async function importCommand(configPath: string, file: string, options: { check: string; server: string }): Promise<number> {
  const config = loadMonitorConfig(configPath);
  if (config === undefined) return 2;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    log(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return 2;
  }
  const parsed = parseHistoryFile(text);
  if (!parsed.ok) {
    log(`${file} was not imported: ${parsed.reason}`);
    return 2;
  }
  const store = await openHistory(config.database);
  if (store === undefined) return 1;
  // Results older than `keep` would be deleted at the next run: left out now, and said.
  const cutoff = Date.now() - config.keepMs;
  const kept = parsed.results.filter((r) => r.at >= cutoff);
  const old = parsed.results.length - kept.length;
  try {
    const added = store.importRuns(kept.map((r) => runOfResult(r, options.check, options.server)));
    const known = kept.length - added;
    const notes = [
      ...(known === 0 ? [] : [`${String(known)} already there`]),
      ...(old === 0 ? [] : [`${String(old)} older than keep (${String(Math.round(config.keepMs / 86_400_000))}d) left out`]),
      ...(parsed.watches.length === 0 ? [] : [`its ${String(parsed.watches.length)} watch summar${parsed.watches.length === 1 ? 'y' : 'ies'} left out (the monitor keeps no watches)`]),
    ];
    log(`${String(added)} result${added === 1 ? '' : 's'} of ${file} imported as runs of "${options.check}" on ${options.server}${notes.map((n) => `; ${n}`).join('')}`);
    return 0;
  } catch (err) {
    return historyFaultExit(err);
  } finally {
    store.close();
  }
}
