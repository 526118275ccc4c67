// What the monitor's commands share (docs/monitor.md): where the configuration and the history
// live by default, reading the one and opening the other with faults said on standard error, and
// a run in a line of the log.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { terminalText } from '../terminal/terminal-text.js';
import { MonitorConfigError, durationMs, MIN_INTERVAL_MS, parseDatabase, parseMonitorConfig, type MonitorConfig } from './monitor-config.js';
import { openStore, StoreError, type RunRecord, type Store } from './store.js';

/** The configuration file when none is named: $XDG_CONFIG_HOME/netdiag/monitor.yaml. */
export function defaultConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'netdiag', 'monitor.yaml');
}

/** The history when the configuration names none: $XDG_DATA_HOME/netdiag/monitor.db. */
function defaultDatabase(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'netdiag', 'monitor.db');
}

export const log = (line: string): void => {
  process.stderr.write(`netdiag monitor: ${terminalText(line)}\n`);
};

/** The configuration file's text, or undefined having said why it cannot be read. */
function configText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    log(`cannot read the configuration ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file (docs/monitor.md in the netdiag repository has an example)' : err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

/** `parse` of the file's text, or undefined having said the fault with its line and field. */
function parsed<T>(path: string, parse: (text: string) => T): T | undefined {
  const text = configText(path);
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (err) {
    if (!(err instanceof MonitorConfigError)) throw err;
    log(err.message);
    return undefined;
  }
}

/**
 * The shortest schedule a configuration may give: a minute, or what NETDIAG_MONITOR_MIN_INTERVAL
 * says (a duration, at least 1s), which the test suites set so a check runs each second.
 */
function minInterval(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.NETDIAG_MONITOR_MIN_INTERVAL;
  if (text === undefined || text === '') return MIN_INTERVAL_MS;
  const ms = durationMs(text);
  if (ms === undefined || ms < 1000) throw new MonitorConfigError(`NETDIAG_MONITOR_MIN_INTERVAL "${text}" is not a duration of 1s or more (1s, 30s, 1m)`);
  return ms;
}

/** The configuration at `path`, or exit 2 with the fault's line and field. */
export function loadMonitorConfig(path: string): MonitorConfig | undefined {
  return parsed(path, (text) => parseMonitorConfig(text, path, defaultDatabase(), minInterval()));
}

/** The history file the configuration at `path` names, whatever its other settings hold; or undefined having said why not. */
export function loadDatabase(path: string): string | undefined {
  return parsed(path, (text) => parseDatabase(text, path, defaultDatabase()));
}

/** A fault of the history said in the log; anything else thrown on. */
function historyFaultSaid(err: unknown): void {
  if (!(err instanceof StoreError)) throw err;
  log(err.message);
}

/** The exit status of a command the history failed: 1, the fault said; anything else thrown on. */
export function historyFaultExit(err: unknown): number {
  historyFaultSaid(err);
  return 1;
}

export async function openHistory(path: string): Promise<Store | undefined> {
  try {
    return await openStore(path);
  } catch (err) {
    historyFaultSaid(err);
    return undefined;
  }
}

/** A run's outcome in one word (`history --json`, the page's /history.json): it ran and reported, it did not run, the server's rate limit refused it, or the monitor did not run it (paused, the budget, the link busy). */
export const outcomeOf = (r: RunRecord): 'ok' | 'failed' | 'limited' | 'skipped' => (typeof r.skipped === 'string' ? 'skipped' : r.limited === true ? 'limited' : r.ok ? 'ok' : 'failed');

/** The figures a line of the log shows for a run. */
export function summary(r: RunRecord, quote: (text: string) => string = String): string {
  if (typeof r.skipped === 'string') return `skipped: ${quote(r.skipped)}`;
  if (!r.ok) return `${r.limited === true ? 'limited' : 'failed'}: ${quote(r.error ?? '')}`;
  const shown = Object.entries(r.figures).filter(([, v]) => typeof v === 'number' || (typeof v === 'string' && v.length <= 40));
  return shown
    .slice(0, 6)
    .map(([k, v]) => `${k} ${typeof v === 'string' ? quote(v) : String(v)}`)
    .join(', ');
}
